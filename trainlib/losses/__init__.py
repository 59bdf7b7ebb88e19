"""`tl.losses` (Keras 3's `keras.losses`): gathers the loss families.

`core` (regressions, cross-entropies, hinges; `Loss`, the reduction and masks),
`classification` (focal and generalized cross-entropies), `segmentation` (Dice, Tversky),
`embedding` (Circle), `sequence` (CTC), and `registry` (names, `get`, `serialize`).
"""
from .core import *  # noqa: F401,F403
from .core import __all__ as _core_all
from .core import EPSILON, _check_shapes, _from_activation, _pair  # noqa: F401
from .classification import *  # noqa: F401,F403
from .classification import __all__ as _classification_all
from .segmentation import *  # noqa: F401,F403
from .segmentation import __all__ as _segmentation_all
from .embedding import *  # noqa: F401,F403
from .embedding import __all__ as _embedding_all
from .sequence import *  # noqa: F401,F403
from .sequence import __all__ as _sequence_all
from .registry import *  # noqa: F401,F403
from .registry import __all__ as _registry_all
from .registry import _CLASSES, _FUNCTIONS  # noqa: F401

__all__ = [*_core_all, *_classification_all, *_segmentation_all, *_embedding_all,
           *_sequence_all, *_registry_all]
