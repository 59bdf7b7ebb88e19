"""`tl.train`: training checkpoints and the `tf.train.Example` protocol buffers (TensorFlow's
`tf.train` names). Only re-exports: `trainlib/checkpoint.py` owns the checkpoint format and the
object graph, `trainlib/graph/example_proto.py` the Example messages (built on first use, so
trainlib imports without the `protobuf` package)."""
from .checkpoint import (Checkpoint, CheckpointLoadStatus, CheckpointManager,  # noqa: F401
                         CheckpointOptions, latest_checkpoint)
from .graph.example_proto import MESSAGE_NAMES as _MESSAGE_NAMES, message_class as _message_class


def __getattr__(name):
    if name in _MESSAGE_NAMES:
        return _message_class(name)
    raise AttributeError(f"module 'trainlib.train' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_MESSAGE_NAMES))
