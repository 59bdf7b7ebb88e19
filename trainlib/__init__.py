"""trainlib: a Keras-like training library whose training steps are graph-compiled automatically.

`import trainlib as tl`; names mirror TensorFlow's (`tl.function`, `tl.GradientTape`,
`tl.matmul`, `tl.keras`-style layers under `tl.layers`). This module only re-exports.
"""
from .graph import dtypes  # noqa: F401
from .graph.dtypes import (DType, as_dtype, bool, complex64, double, float16, float32,  # noqa: F401,A004
                           float64, half, int8, int16, int32, int64, resource, string, uint8)
from .graph import errors  # noqa: F401
from .graph.tensor import Tensor, TensorShape, TensorSpec, is_tensor  # noqa: F401
from .graph.op import convert_to_tensor  # noqa: F401
from .graph.variables import Module, Variable  # noqa: F401
from .graph.autodiff import (GradientTape, UnconnectedGradients, custom_gradient,  # noqa: F401
                             recompute_grad)
from .graph.function import Function, function  # noqa: F401
from .graph.ops import bitwise, image, signal  # noqa: F401
from . import linalg, math, nn, random  # noqa: F401 -- the tf.linalg, tf.math, tf.nn, tf.random namespaces
from .graph.ops import ragged, sparse, strings  # noqa: F401
from .graph.ops.sparse import SparseTensor  # noqa: F401
from .graph.ops.ragged import RaggedTensor, RaggedTensorSpec  # noqa: F401
from .graph.ops.math import *  # noqa: F401,F403
from .graph.ops.array import *  # noqa: F401,F403
from .graph.ops.io import Assert, print  # noqa: F401,A004
from .graph.ops.control_flow import *  # noqa: F401,F403
from .graph.ops.tensor_array import TensorArray  # noqa: F401
from .graph.ops.script_ops import init_scope, numpy_function, py_function  # noqa: F401
from .graph.context import executing_eagerly  # noqa: F401
from .graph.ops.functional_ops import foldl, foldr, map_fn, scan, vectorized_map  # noqa: F401
from . import autograph, config, debugging, io  # noqa: F401
from .graph.backend import device  # noqa: F401

__version__ = "0.1.0"
from . import initializers, activations, layers, optim, losses, metrics, callbacks, data, models  # noqa: F401,E402
from . import regularizers, constraints, mixed_precision  # noqa: F401,E402
from .models import Model, Sequential  # noqa: F401,E402
from . import keras  # noqa: F401,E402 -- `tl.keras.layers.Dense`... for ported Keras code
from . import saved_model, saving  # noqa: F401,E402
from . import distribute  # noqa: F401,E402
from . import utils  # noqa: F401,E402
from . import train, types  # noqa: F401,E402
from . import summary  # noqa: F401,E402 -- tl.summary (TensorBoard logs; tensorboard is optional)
