"""`trainlib.keras`: Keras 3's public layout over trainlib, so ported code keeps working.

`from trainlib import keras` (or `import trainlib.keras as keras`), then `keras.layers.Dense`,
`keras.optimizers.Adam`, `keras.Input`, `keras.saving.load_model`, or
`from trainlib.keras.layers import Dense`, as with `import keras`. Each submodule only re-exports.
"""
from . import activations, callbacks, initializers, layers, losses, metrics, models, optimizers, saving, utils  # noqa: F401
from . import ops, random  # noqa: F401
from .layers import Input, Layer  # noqa: F401
from .models import Model, Sequential  # noqa: F401
