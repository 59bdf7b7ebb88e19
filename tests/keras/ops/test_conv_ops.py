"""keras.ops convolutions and pooling are the graph's own conv/pool ops, one op per call: 3-D
convolution, transposed convolution and pooling on the 3-D ops, grouped convolution on the conv
op itself (their values: the `nn.conv`/pool rows of tests/keras/ops/table.py, against Keras in
tests/keras_compare)."""
import numpy as np
import pytest

import trainlib as tl
from trainlib.keras import ops as K

RNG = np.random.default_rng(0)


def _types(f, *shapes):
    args = [tl.constant(RNG.standard_normal(s).astype(np.float32)) for s in shapes]
    return [op.type for op in tl.function(f).get_concrete_function(*args).graph.get_operations()]


@pytest.mark.parametrize("f,shapes,op", [
    (lambda x, k: K.nn.conv(x, k, strides=(2, 1, 1), padding="same"),
     [(2, 5, 4, 4, 2), (3, 2, 2, 2, 3)], "Conv3D"),
    (lambda x, k: K.nn.conv(x, k, padding="same", data_format="channels_first"),
     [(2, 2, 5, 4, 4), (3, 2, 2, 2, 3)], "Conv3D"),
    (lambda x, k: K.nn.conv(x, k), [(1, 5, 5, 4), (3, 3, 2, 6)], "Conv2D"),     # 2 groups
    (lambda x, k: K.nn.conv(x, k), [(1, 7, 6), (3, 2, 6)], "Conv2D"),           # 3 groups, 1-D
    (lambda x, k: K.nn.conv_transpose(x, k, strides=2), [(2, 3, 4, 3, 2), (3, 2, 3, 4, 2)],
     "Conv3DBackpropInputV2"),
    (lambda x: K.nn.max_pool(x, 2, padding="same"), [(2, 5, 4, 4, 3)], "MaxPool3D"),
    (lambda x: K.nn.average_pool(x, (3, 2, 2), 1), [(2, 5, 4, 4, 3)], "AvgPool3D"),
])
def test_one_op_per_call(f, shapes, op):
    types = _types(f, *shapes)
    assert types.count(op) == 1
    assert not ({"Split", "SplitV", "Pack", "AddV2", "AddN", "Max", "Mean", "Conv2D",
                 "Conv2DBackpropInput", "MaxPool", "AvgPool"} - {op}) & set(types), types

