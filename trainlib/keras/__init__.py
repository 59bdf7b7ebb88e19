"""`trainlib.keras`: Keras 3's public layout over trainlib, so ported code keeps working.

`from trainlib import keras` (or `import trainlib.keras as keras`), then `keras.layers.Dense`,
`keras.optimizers.Adam`, `keras.Input`, `keras.saving.load_model`, or
`from trainlib.keras.layers import Dense`, as with `import keras`. Each submodule only re-exports.
"""
from . import (activations, callbacks, constraints, initializers, layers, losses,  # noqa: F401
               metrics, mixed_precision, models, optimizers, regularizers, saving, utils)
from . import config, datasets, ops, random, tree  # noqa: F401 -- keras.datasets, keras.ops (and its groups), keras.random
from . import backend, preprocessing  # noqa: F401 -- keras.backend; tf.keras 2's keras.preprocessing
from . import applications, dtype_policies  # noqa: F401
from ..graph.backend import device  # noqa: F401 -- keras.device("cpu")
from ..layers.input_spec import InputSpec  # noqa: F401
from ..layers.variables import name_scope  # noqa: F401
from ..version import keras_version as version  # noqa: F401
from ..initializers import Initializer  # noqa: F401
from ..layers.base import Input, KerasTensor, Layer  # noqa: F401
from ..layers.variables import Variable  # noqa: F401
from ..losses import Loss  # noqa: F401
from ..metrics import Metric  # noqa: F401
from ..mixed_precision import DTypePolicy  # noqa: F401
from ..models import Model, Sequential  # noqa: F401
from ..optim import Optimizer  # noqa: F401
from ..regularizers import Regularizer  # noqa: F401
from ..graph.autodiff import recompute_grad as remat  # noqa: F401 -- keras.remat

FloatDTypePolicy = DTypePolicy
