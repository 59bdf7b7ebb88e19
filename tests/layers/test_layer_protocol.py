"""The Layer protocol as Keras 3 has it: tracking at assignment, add_weight, add_loss and
losses, regularizer/constraint arguments, build() marking a layer built, and Keras's
printing and warnings."""
import warnings

import numpy as np
import pytest

import trainlib as tl
from trainlib import keras


class Block(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.first = keras.layers.Dense(3)
        self.stack = []                       # a list: what is appended is tracked too
        self.stack.append(keras.layers.Dense(2))
        self.table = {"extra": keras.layers.Dense(1)}
        self.scale = keras.Variable(np.ones((1,), np.float32), name="scale")

    def call(self, x):
        self.add_loss(tl.reduce_sum(x) * 0.0 + 1.0)
        return self.table["extra"](self.stack[0](self.first(x))) * self.scale


def test_weights_and_sublayers_are_tracked_when_assigned():
    block = Block()
    block(np.ones((2, 4), np.float32))
    assert block.layers == [block.first, block.stack[0], block.table["extra"]]
    first, second, third = block.layers
    assert [v.path for v in block.weights] == ["scale"] + [
        f"{block.name}/{layer.name}/{w}" for layer in (first, second, third)
        for w in ("kernel", "bias")]
    # .weights reads what was tracked at assignment: the attributes are not walked again
    block.__dict__["first"] = None
    assert len(block.weights) == 7
    block.__dict__["first"] = first
    popped = block.stack.pop()
    assert popped not in block.layers and len(block.weights) == 5
    del block.scale                                     # deleting an attribute untracks it
    assert len(block.weights) == 4


def test_variables_print_as_keras_3_variables():
    d = keras.layers.Dense(4, kernel_initializer="ones", name="dense_print")
    d.build((None, 3))
    assert d.kernel.name == "kernel" and d.kernel.path == "dense_print/kernel"
    assert repr(d.kernel).startswith(
        "<Variable path=dense_print/kernel, shape=(3, 4), dtype=float32, value=[[1. 1. 1. 1.]")
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="inner")], name="seq_p")
    assert [v.path for v in m.weights] == ["seq_p/inner/kernel", "seq_p/inner/bias"]


def test_symbolic_inputs_report_tuple_shape_and_string_dtype():
    x = keras.Input((784,))
    assert x.shape == (None, 784) and isinstance(x.shape, tuple)
    assert x.dtype == "float32" and isinstance(x.dtype, str)
    y = keras.layers.Dense(10)(x)
    assert y.shape == (None, 10) and y.dtype == "float32"
    assert repr(keras.Input((2,), name="pixels")) == \
        "<KerasTensor shape=(None, 2), dtype=float32, sparse=False, ragged=False, name=pixels>"


def test_input_shape_argument_warns_as_keras_naming_the_users_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        keras.layers.Dense(3, input_shape=(4,))
    assert len(caught) == 1 and caught[0].category is UserWarning
    assert str(caught[0].message).startswith("Do not pass an `input_shape`/`input_dim` argument "
                                             "to a layer.")
    assert caught[0].filename == __file__


@pytest.mark.parametrize("make, shape", [
    (lambda: keras.layers.Dense(3), (None, 5)),
    (lambda: keras.layers.Conv2D(2, 3), (None, 6, 6, 3)),
    (lambda: keras.layers.BatchNormalization(), (None, 4)),
    (lambda: keras.layers.LayerNormalization(), (None, 4)),
    (lambda: keras.layers.Embedding(7, 3), (None, 2)),
])
def test_build_called_directly_marks_the_layer_built(make, shape):
    layer = make()
    layer.build(shape)
    assert layer.built
    weights = [np.full(w.shape, 0.5, np.float32) for w in layer.get_weights()]
    layer.set_weights(weights)
    x = np.ones((2,) + shape[1:], np.int32 if isinstance(layer, keras.layers.Embedding)
                else np.float32)
    layer(x)
    assert len(layer.weights) == len(weights)           # not built a second time
    for got, want in zip(layer.get_weights(), weights):
        np.testing.assert_array_equal(got, want)        # set_weights kept


def test_add_weight_keras_3_signature():
    layer = keras.layers.Layer()
    v = layer.add_weight((2, 3), "ones", "float32", trainable=False, name="w",
                         regularizer="l2", constraint="non_neg")
    assert v.shape == (2, 3) and v.dtype == "float32" and not v.trainable
    assert isinstance(v.regularizer, keras.regularizers.L2)
    assert isinstance(v.constraint, keras.constraints.NonNeg)
    assert layer.non_trainable_weights == [v] and layer.weights == [v]
    assert layer.add_weight().shape == ()
    with pytest.raises(ValueError, match="`name` must be passed as a keyword argument"):
        layer.add_weight("kernel", (2,))


def test_add_loss_cleared_at_each_outermost_call_and_gathered_from_sublayers():
    block = Block()
    x = np.ones((2, 4), np.float32)
    block(x)
    block(x)
    assert len(block.losses) == 1 and float(block.losses[0]) == 1.0

    class Outer(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def call(self, x):
            self.add_loss(tl.constant(2.0))
            return self.block(x)

    outer = Outer()
    outer(x)
    outer(x)
    assert [float(v) for v in outer.losses] == [2.0, 1.0]
    with pytest.raises(ValueError, match="can only be called from inside"):
        outer.add_loss(1.0)


def test_regularizers_and_activity_regularizer_losses():
    d = keras.layers.Dense(5, kernel_initializer="ones", kernel_regularizer=keras.regularizers.L1(0.01),
                           activity_regularizer=keras.regularizers.L2(0.01))
    d(np.ones((5, 5), np.float32) * 2.0)
    # Keras's documented example: kernel 0.25 plus activity 5.0 (divided by the batch of 5)
    assert float(tl.add_n(d.losses)) == pytest.approx(5.25)
    conv = keras.layers.Conv2D(2, 1, kernel_regularizer="l2", bias_regularizer="l1",
                               bias_initializer="ones")
    conv(np.ones((1, 3, 3, 1), np.float32))
    k = conv.kernel.numpy()
    assert [float(v) for v in conv.losses] == pytest.approx([0.01 * (k ** 2).sum(), 0.02])
    bn = keras.layers.BatchNormalization(gamma_regularizer="l2", beta_constraint="non_neg")
    bn(np.ones((2, 3), np.float32))
    assert float(bn.losses[0]) == pytest.approx(0.03)
    assert isinstance(bn.beta.constraint, keras.constraints.NonNeg)
    emb = keras.layers.Embedding(4, 2, embeddings_regularizer="l1", embeddings_initializer="ones")
    emb(np.array([[1]]))
    assert float(emb.losses[0]) == pytest.approx(0.08)
    frozen = keras.layers.Dense(2, kernel_regularizer="l2", trainable=False)
    frozen(np.ones((1, 2), np.float32))
    assert frozen.losses == []                          # trainable weights only, as Keras


def test_regularizer_and_constraint_configs_round_trip():
    d = keras.layers.Dense(3, kernel_regularizer=keras.regularizers.L1L2(l1=0.1, l2=0.2),
                           bias_constraint=keras.constraints.MaxNorm(3, axis=0),
                           activity_regularizer="l2")
    config = d.get_config()
    assert config["kernel_regularizer"] == {"module": "keras.regularizers", "class_name": "L1L2",
                                            "config": {"l1": 0.1, "l2": 0.2},
                                            "registered_name": None}
    assert config["bias_constraint"]["config"] == {"max_value": 3, "axis": 0}
    again = keras.layers.Dense.from_config(config)
    assert again.kernel_regularizer.l2 == 0.2 and again.bias_constraint.max_value == 3
    assert isinstance(again.activity_regularizer, keras.regularizers.L2)


def test_variables_are_lists_and_bad_arguments_are_keras_errors():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(3),
                              keras.layers.BatchNormalization()])
    for attribute in ("variables", "trainable_variables", "non_trainable_variables", "weights"):
        assert isinstance(getattr(model, attribute), list), attribute
    assert len(model.non_trainable_variables) == 2 and len(model.variables) == 6
    with pytest.raises(ValueError, match="Unrecognized keyword arguments passed to Dense"):
        keras.layers.Dense(3, kernel_size=2)
    with pytest.raises(ValueError, match="Expected `trainable` to be a boolean"):
        keras.layers.Dense(3, trainable="yes")


def test_layer_dtype_attributes_are_keras_strings():
    layer = keras.layers.Dense(2, dtype="float64")
    assert (layer.dtype, layer.compute_dtype, layer.variable_dtype) == ("float64",) * 3
    assert isinstance(layer.dtype, str) and repr(layer.dtype_policy) == '<DTypePolicy "float64">'
    assert layer.get_config()["dtype"] == {"module": "keras", "class_name": "DTypePolicy",
                                           "config": {"name": "float64"}, "registered_name": None}


def test_a_deep_copy_tracks_its_own_weights():
    import copy  # noqa: PLC0415
    block = Block()
    block(np.ones((1, 4), np.float32))
    twin = copy.deepcopy(block)
    assert len(twin.weights) == len(block.weights) == 7
    assert not {id(v) for v in twin.weights} & {id(v) for v in block.weights}
    twin.again = twin.first                              # already tracked: not added twice
    assert twin.layers == [twin.first, twin.stack[0], twin.table["extra"]]
