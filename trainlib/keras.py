"""`tl.keras`: the Keras-level names under Keras's module layout, so ported code keeps working.

`import trainlib as tl; keras = tl.keras` then `keras.layers.Dense`, `keras.optimizers.Adam`,
`keras.Input`, `keras.saving.load_model`... as with `import keras`.
"""
from . import activations, callbacks, initializers, layers, losses, metrics, models, saving, utils  # noqa: F401
from . import optim as optimizers  # noqa: F401
from .layers import Input  # noqa: F401
from .models import Model, Sequential  # noqa: F401
