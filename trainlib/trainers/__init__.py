"""The Trainer (compile, steps, the functions that wrap them, loops), `CompileLoss`,
`CompileMetrics` and `EpochIterator`, as Keras 3's `keras.src.trainers`."""
from .compile_utils import CompileLoss, CompileMetrics  # noqa: F401
from .epoch_iterator import EpochIterator  # noqa: F401
from .trainer import Trainer  # noqa: F401

__all__ = ["Trainer", "CompileLoss", "CompileMetrics", "EpochIterator"]
