"""tl.types.experimental: TensorLike, GenericFunction, ConcreteFunction as isinstance targets."""
import numpy as np

import trainlib as tl

T = tl.types.experimental


def test_isinstance_targets():
    f = tl.function(lambda x: x + 1)
    concrete = f.get_concrete_function(tl.TensorSpec([], tl.float32))
    assert isinstance(f, T.GenericFunction) and isinstance(f, T.PolymorphicFunction)
    assert isinstance(concrete, T.ConcreteFunction) and not isinstance(f, T.ConcreteFunction)
    for value in (tl.constant(1.0), tl.Variable(1.0), np.ones(2), np.float32(1), 1, 2.0, [1, 2]):
        assert isinstance(value, T.TensorLike), value
    assert not isinstance(object(), T.TensorLike) and not isinstance(None, T.TensorLike)
