"""`tl.image`: TensorFlow's `tf.image` — resizing, crops, flips and colour adjustments
(trainlib/graph/ops/image.py), image files (image_io.py) and quality measures and linear
colour spaces (image_metrics.py).

Owns nothing but names.
"""
from .graph.ops.image import *  # noqa: F401,F403 -- its __all__ is the public set
from .graph.ops.image import __all__ as _core
from .graph.ops.image_io import __all__ as _files
from .graph.ops.image_io import *  # noqa: F401,F403
from .graph.ops.image_metrics import __all__ as _metrics
from .graph.ops.image_metrics import *  # noqa: F401,F403

__all__ = list(_core) + list(_files) + list(_metrics)
