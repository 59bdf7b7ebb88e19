"""trainlib: a Keras-like training library whose training steps are graph-compiled automatically.

`import trainlib as tl`; names mirror TensorFlow's (`tl.function`, `tl.GradientTape`,
`tl.matmul`, `tl.keras`-style layers under `tl.layers`). This module only re-exports.
"""
from .graph import dtypes  # noqa: F401
from .graph.dtypes import (DType, as_dtype, bool, complex64, complex128, double, float16,  # noqa: F401,A004
                           float32, float64, half, int8, int16, int32, int64, resource, string,
                           uint8, uint16, uint32, uint64)
from .graph import errors  # noqa: F401
from .graph.tensor import Tensor, TensorShape, TensorSpec, is_tensor  # noqa: F401
from .graph.op import convert_to_tensor  # noqa: F401
from .graph.variables import (Module, Variable, VariableAggregation,  # noqa: F401
                              VariableSynchronization)
from .graph.autodiff import (GradientTape, UnconnectedGradients, custom_gradient,  # noqa: F401
                             grad_pass_through, recompute_grad)
from .graph.scopes import control_dependencies, get_current_name_scope, name_scope  # noqa: F401
from .graph.function import Function, function  # noqa: F401
from .graph.ops import bitwise, signal  # noqa: F401
from . import image  # noqa: F401 -- tl.image: graph/ops image, image_io, image_metrics
from . import linalg, math, nn, random  # noqa: F401 -- the tf.linalg, tf.math, tf.nn, tf.random namespaces
from .graph.ops import ragged, sets, sparse, strings  # noqa: F401
from .graph.ops.sparse import SparseTensor, SparseTensorSpec  # noqa: F401
from .graph.ops.ragged import RaggedTensor, RaggedTensorSpec  # noqa: F401
from .graph.ops.math import *  # noqa: F401,F403
from .graph.ops.array import *  # noqa: F401,F403
from .graph.ops.io import (Assert, assert_equal, assert_greater, assert_less,  # noqa: F401
                          assert_rank, print, timestamp)  # noqa: A004
from .graph.ops.tf_array import *  # noqa: F401,F403
from .graph.ops.grouping import group, identity_n, no_op, tuple  # noqa: F401,A004
from .graph.ops.case import case, switch_case  # noqa: F401
from .graph.ops.complex import complex, eig  # noqa: F401,A004
from .graph.ops.decompositions import eigvals  # noqa: F401
from .graph.ops.numeric import bitcast  # noqa: F401
from .graph.ops.strings import as_string  # noqa: F401
from .graph.ops.control_flow import *  # noqa: F401,F403
from .graph.ops.tensor_array import TensorArray  # noqa: F401
from .graph.ops.script_ops import init_scope, numpy_function, py_function  # noqa: F401
from .graph.context import executing_eagerly, inside_function  # noqa: F401
from .graph.tensor import is_symbolic_tensor  # noqa: F401
from .graph.ops.functional_ops import foldl, foldr, map_fn, scan, vectorized_map  # noqa: F401
from . import audio, autograph, config, debugging, io  # noqa: F401
from .graph.backend import device  # noqa: F401

from . import compat, nest, test, version  # noqa: F401
from .version import VERSION as __version__  # noqa: N811
from .log import get_logger  # noqa: F401
from . import initializers, activations, layers, optim, losses, metrics, callbacks, data, models  # noqa: F401,E402
from . import regularizers, constraints, mixed_precision  # noqa: F401,E402
# TensorFlow 2's initializer names (`tf.zeros_initializer()`...) are Keras's classes
zeros_initializer, ones_initializer = initializers.Zeros, initializers.Ones  # noqa: E402
constant_initializer = initializers.Constant  # noqa: E402
random_normal_initializer = initializers.RandomNormal  # noqa: E402
random_uniform_initializer = initializers.RandomUniform  # noqa: E402
from .models import Model, Sequential  # noqa: F401,E402
from . import keras  # noqa: F401,E402 -- `tl.keras.layers.Dense`... for ported Keras code
from . import saved_model, saving  # noqa: F401,E402
from . import distribute  # noqa: F401,E402
from . import utils  # noqa: F401,E402
from . import train, types  # noqa: F401,E402
from . import summary  # noqa: F401,E402 -- tl.summary (TensorBoard logs; tensorboard is optional)
from . import lookup  # noqa: F401,E402 -- tl.lookup (hash tables)
from . import profiler  # noqa: F401,E402 -- tl.profiler (tf.profiler.experimental: start/stop/Trace)
