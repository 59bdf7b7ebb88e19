"""`trainlib.keras.ops`: Keras 3's `keras.ops`, with its `numpy`, `nn`, `linalg` and `image` groups.

`from trainlib.keras import ops` then `ops.mean(x, axis=1)`, `ops.nn.softmax(x)`,
`ops.image.resize(images, (64, 64))`, as with `from keras import ops`. Every function maps onto
trainlib's ops (NumPy's argument forms and Keras's dtype promotion adapted in `numpy.py`,
`nn.py`, `linalg.py`, `image.py`, `core.py`), so each runs eagerly, inside `tl.function`, under
`GradientTape`, and on functional-API inputs (`keras.Input`). This module only re-exports.
Every name of Keras 3.15's `keras.ops` and its groups is provided (complex results are complex64).
"""
from . import image, linalg, nn, numpy  # noqa: F401
from ._symbolic import export as _export, install_operators as _install_operators
from .core import __all__ as _core_names
from .linalg import __all__ as _linalg_names
from .nn import __all__ as _nn_names
from .numpy import __all__ as _numpy_names

_HERE = globals()
for _module, _names in ((numpy, _numpy_names), (nn, _nn_names), (linalg, _linalg_names)):
    for _name in _names:
        _HERE[_name] = _export(_module, _name)
from . import core as _core  # noqa: E402 -- after the groups: core's names win where they overlap

for _name in _core_names:
    _HERE[_name] = _export(_core, _name)
for _name in image.__all__:  # ops.image.* too handle functional-API inputs
    _export(image, _name)
_install_operators(numpy)  # x * 2.0 on a keras.Input records a multiply, as in Keras
del _HERE, _module, _names, _name
