"""`tl.train`: training checkpoints (TensorFlow's `tf.train` names). Only re-exports:
`trainlib/checkpoint.py` owns the format and the object graph."""
from .checkpoint import (Checkpoint, CheckpointLoadStatus, CheckpointManager,  # noqa: F401
                         CheckpointOptions, latest_checkpoint)
