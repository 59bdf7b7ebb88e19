"""Keras 3 vs trainlib, layer by layer, for the convolution, pooling, reshaping, merging,
activation and simple regularization families: with Keras's weights copied in, the same
inputs give Keras's outputs and input/weight gradients, eagerly and inside tl.function, and
each layer's config equals Keras's and survives from_config.
"""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import close, functional_shapes  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

RTOL, ATOL = 1e-4, 1e-5

# name -> (constructor over a layers module, input shapes)
LAYERS = {
    "Conv1D": (lambda L: L.Conv1D(4, 3, strides=2, padding="same"), [(2, 9, 3)]),
    "Conv1D_causal_dilated": (lambda L: L.Conv1D(3, 3, padding="causal", dilation_rate=2,
                                                 activation="tanh"), [(2, 8, 2)]),
    "Conv1D_groups": (lambda L: L.Conv1D(4, 2, groups=2, use_bias=False), [(2, 6, 4)]),
    "Conv2D_groups": (lambda L: L.Conv2D(6, 3, groups=3, padding="same", strides=2),
                      [(2, 7, 7, 3)]),
    "Conv2D_dilated": (lambda L: L.Conv2D(2, (3, 2), dilation_rate=(2, 1)), [(2, 8, 6, 3)]),
    "Conv3D": (lambda L: L.Conv3D(2, (2, 3, 2), strides=(1, 2, 1), padding="same"),
               [(2, 4, 5, 4, 3)]),
    "Conv1DTranspose": (lambda L: L.Conv1DTranspose(3, 3, strides=2), [(2, 5, 2)]),
    "Conv2DTranspose": (lambda L: L.Conv2DTranspose(3, 3, strides=2, padding="same"),
                        [(2, 4, 4, 2)]),
    "Conv2DTranspose_output_padding": (
        lambda L: L.Conv2DTranspose(2, (3, 2), strides=(2, 3), output_padding=(1, 2)),
        [(2, 3, 3, 2)]),
    "Conv3DTranspose": (lambda L: L.Conv3DTranspose(2, 2, strides=2, activation="relu"),
                        [(2, 2, 3, 2, 2)]),
    "DepthwiseConv1D": (lambda L: L.DepthwiseConv1D(3, depth_multiplier=2, padding="same"),
                        [(2, 6, 3)]),
    "DepthwiseConv2D": (lambda L: L.DepthwiseConv2D(3, strides=2, depth_multiplier=2),
                        [(2, 7, 7, 3)]),
    "SeparableConv1D": (lambda L: L.SeparableConv1D(4, 3, depth_multiplier=2), [(2, 7, 3)]),
    "SeparableConv2D": (lambda L: L.SeparableConv2D(4, 3, padding="same", dilation_rate=2),
                        [(2, 6, 6, 3)]),
    "MaxPooling1D": (lambda L: L.MaxPooling1D(3, strides=2, padding="same"), [(2, 9, 3)]),
    "MaxPooling3D": (lambda L: L.MaxPooling3D(2), [(2, 4, 5, 4, 2)]),
    "AveragePooling1D": (lambda L: L.AveragePooling1D(2), [(2, 9, 3)]),
    "AveragePooling3D": (lambda L: L.AveragePooling3D((2, 2, 1), padding="same"),
                         [(2, 3, 5, 4, 2)]),
    "MaxPooling2D_channels_first": (lambda L: L.MaxPooling2D(data_format="channels_first"),
                                    [(2, 3, 4, 6)]),
    "GlobalAveragePooling1D": (lambda L: L.GlobalAveragePooling1D(), [(2, 5, 3)]),
    "GlobalAveragePooling3D": (lambda L: L.GlobalAveragePooling3D(keepdims=True),
                               [(2, 3, 2, 4, 3)]),
    "GlobalMaxPooling1D": (lambda L: L.GlobalMaxPooling1D(), [(2, 5, 3)]),
    "GlobalMaxPooling2D": (lambda L: L.GlobalMaxPooling2D(data_format="channels_first"),
                           [(2, 3, 4, 4)]),
    "GlobalMaxPooling3D": (lambda L: L.GlobalMaxPooling3D(), [(2, 3, 2, 4, 3)]),
    "Reshape": (lambda L: L.Reshape((3, -1)), [(2, 4, 3)]),
    "Permute": (lambda L: L.Permute((2, 3, 1)), [(2, 3, 4, 5)]),
    "RepeatVector": (lambda L: L.RepeatVector(3), [(2, 4)]),
    "UpSampling1D": (lambda L: L.UpSampling1D(3), [(2, 4, 3)]),
    "UpSampling2D": (lambda L: L.UpSampling2D((2, 3)), [(2, 3, 4, 2)]),
    "UpSampling2D_bilinear": (lambda L: L.UpSampling2D((2, 3), interpolation="bilinear"),
                              [(2, 3, 4, 2)]),
    "UpSampling3D": (lambda L: L.UpSampling3D((1, 2, 2)), [(2, 2, 3, 2, 2)]),
    "ZeroPadding1D": (lambda L: L.ZeroPadding1D((1, 2)), [(2, 4, 3)]),
    "ZeroPadding2D": (lambda L: L.ZeroPadding2D(((1, 0), (2, 1))), [(2, 3, 3, 2)]),
    "ZeroPadding3D": (lambda L: L.ZeroPadding3D(1), [(2, 2, 3, 2, 2)]),
    "Cropping1D": (lambda L: L.Cropping1D((1, 2)), [(2, 6, 3)]),
    "Cropping2D": (lambda L: L.Cropping2D(((1, 0), (1, 2))), [(2, 5, 6, 2)]),
    "Cropping3D": (lambda L: L.Cropping3D(1), [(2, 4, 4, 4, 2)]),
    "Add": (lambda L: L.Add(), [(2, 4), (2, 4), (2, 4)]),
    "Subtract": (lambda L: L.Subtract(), [(2, 4), (2, 4)]),
    "Multiply": (lambda L: L.Multiply(), [(2, 4), (2, 4)]),
    "Average": (lambda L: L.Average(), [(2, 3, 4), (2, 3, 4)]),
    "Maximum": (lambda L: L.Maximum(), [(2, 4), (2, 4)]),
    "Minimum": (lambda L: L.Minimum(), [(2, 4), (2, 4)]),
    "Concatenate": (lambda L: L.Concatenate(axis=1), [(2, 3, 4), (2, 2, 4)]),
    "Dot": (lambda L: L.Dot(axes=(2, 2)), [(2, 3, 4), (2, 5, 4)]),
    "Dot_vectors_normalized": (lambda L: L.Dot(axes=1, normalize=True), [(2, 4), (2, 4)]),
    "ReLU": (lambda L: L.ReLU(max_value=1.5, negative_slope=0.1, threshold=0.2), [(2, 5)]),
    "ReLU_plain": (lambda L: L.ReLU(), [(2, 5)]),
    "LeakyReLU": (lambda L: L.LeakyReLU(), [(2, 5)]),
    "PReLU": (lambda L: L.PReLU(alpha_initializer="random_normal", shared_axes=[1]),
              [(2, 3, 4)]),
    "ELU": (lambda L: L.ELU(alpha=0.7), [(2, 5)]),
    "Softmax": (lambda L: L.Softmax(axis=1), [(2, 4, 3)]),
    "Identity": (lambda L: L.Identity(), [(2, 3)]),
    "ActivityRegularization": (lambda L: L.ActivityRegularization(0.1, 0.2), [(2, 3)]),
    "Masking": (lambda L: L.Masking(0.0), [(2, 4, 3)]),
    "GaussianNoise": (lambda L: L.GaussianNoise(0.3), [(2, 3)]),
    "GaussianDropout": (lambda L: L.GaussianDropout(0.3), [(2, 3)]),
    "SpatialDropout1D": (lambda L: L.SpatialDropout1D(0.3), [(2, 3, 4)]),
    "SpatialDropout2D": (lambda L: L.SpatialDropout2D(0.3), [(2, 3, 3, 4)]),
    "SpatialDropout3D": (lambda L: L.SpatialDropout3D(0.3), [(2, 2, 3, 3, 4)]),
}


def _inputs(name, shapes):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    xs = [rng.normal(size=s).astype(np.float32) for s in shapes]
    if name == "Masking":
        xs[0][0, 1] = 0.0
    return xs


def _arg(xs):
    return xs if len(xs) > 1 else xs[0]


def _keras_run(layer, xs, cot):
    ts = [tf.constant(x) for x in xs]
    with tf.GradientTape() as tape:
        tape.watch(ts)
        y = layer(_arg(ts))
        loss = tf.reduce_sum(y * cot)
    grads = tape.gradient(loss, ts + list(layer.trainable_weights))
    return y.numpy(), [None if g is None else g.numpy() for g in grads]


def _tl_step(layer, ts, cot):
    with tl.GradientTape() as tape:
        for t in ts:
            tape.watch(t)
        y = layer(_arg(ts))
        loss = tl.reduce_sum(y * cot)
    return y, tape.gradient(loss, ts + list(layer.trainable_weights))


def _numpy(y, grads):
    return y.numpy(), [None if g is None else g.numpy() for g in grads]


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_outputs_gradients_and_config_match_keras(name):
    make, shapes = LAYERS[name]
    xs = _inputs(name, shapes)
    klayer, tlayer = make(keras.layers), make(tl.layers)
    kout = klayer(_arg([tf.constant(x) for x in xs]))
    tlayer(_arg([tl.constant(x) for x in xs]))
    kweights = klayer.get_weights()
    assert [w.shape for w in kweights] == [tuple(w.shape) for w in tlayer.get_weights()], \
        "weight order or shapes differ"
    tlayer.set_weights(kweights)
    cot = np.random.default_rng(1).normal(size=kout.shape).astype(np.float32)
    ky, kgrads = _keras_run(klayer, xs, cot)
    ty, tgrads = _numpy(*_tl_step(tlayer, [tl.constant(x) for x in xs], cot))
    close(ky, ty, f"{name} eager output", RTOL, ATOL)
    for i, (a, b) in enumerate(zip(kgrads, tgrads)):
        assert (a is None) == (b is None), f"{name} gradient {i}: keras {a is None}, tl {b is None}"
        if a is not None:
            close(a, b, f"{name} gradient {i}", RTOL, ATOL)

    graph_step = tl.function(lambda *ts: _tl_step(tlayer, list(ts), cot))
    gy, ggrads = _numpy(*graph_step(*[tl.constant(x) for x in xs]))
    close(ky, gy, f"{name} graph output", RTOL, ATOL)
    for i, (a, b) in enumerate(zip(kgrads, ggrads)):
        if a is not None:
            close(a, b, f"{name} graph gradient {i}", RTOL, ATOL)

    kconfig, tconfig = klayer.get_config(), tlayer.get_config()
    kconfig.pop("name"), tconfig.pop("name")
    assert tconfig == kconfig
    again = type(tlayer).from_config(tlayer.get_config())
    assert again.get_config() == tlayer.get_config()


SYMBOLIC = {"Conv2DTranspose": [(None, 4, 4, 2)], "Conv1DTranspose": [(None, 5, 2)],
            "Reshape": [(None, 4, 3)], "Concatenate": [(None, 3, 4), (None, 2, 4)],
            "Dot": [(None, 3, 4), (None, 5, 4)], "Conv1D_causal_dilated": [(None, None, 2)],
            "Cropping2D": [(None, 5, 6, 2)], "SeparableConv2D": [(None, 6, 6, 3)],
            "UpSampling2D_bilinear": [(None, 3, 4, 2)], "GlobalAveragePooling3D":
                [(None, 3, 2, 4, 3)]}


@pytest.mark.parametrize("name", sorted(SYMBOLIC))
def test_functional_shapes_match_keras(name):
    make = LAYERS[name][0]
    kshape, tshape = functional_shapes(make, SYMBOLIC[name])
    assert tshape == kshape


def test_functional_merge_forms_and_residual_model():
    def build(k):
        i = k.layers.Input((6, 6, 3))
        h = k.layers.Conv2D(3, 3, padding="same")(i)
        h = k.layers.add([h, i])
        h = k.layers.concatenate([h, k.layers.maximum([h, i])])
        h = k.layers.GlobalAveragePooling2D()(h)
        return k.Model(i, k.layers.Dense(2)(k.layers.multiply([h, h])))
    km, tm = build(keras), build(tl.keras)
    tm.set_weights(km.get_weights())
    x = np.random.default_rng(0).normal(size=(3, 6, 6, 3)).astype(np.float32)
    close(km.predict(x, verbose=0), tm.predict(x, verbose=0), "residual model", RTOL, ATOL)


@pytest.mark.parametrize("make,pattern", [
    (lambda L: L.Conv2D(4, 3, groups=3), "divisible"),
    (lambda L: L.Conv1D(0, 3), "filters"),
    (lambda L: L.Conv2D(4, 3, padding="causal"), "padding"),
    (lambda L: L.Conv2D(4, (3, 3, 3)), "kernel_size"),
    (lambda L: L.Conv2D(4, 3, strides=2, dilation_rate=2), "dilation_rate"),
    (lambda L: L.Conv2DTranspose(4, 3, strides=2, output_padding=2), "output_padding"),
    (lambda L: L.LeakyReLU(-1.0), "negative_slope"),
    (lambda L: L.ReLU(max_value=-1.0), "max_value"),
    (lambda L: L.Permute((1, 3)), "dims"),
    (lambda L: L.Reshape((2, -1, -1)), ""),
    (lambda L: L.ZeroPadding2D((1, 2, 3)), "padding"),
])
def test_bad_arguments_raise_like_keras(make, pattern):
    with pytest.raises(ValueError, match=pattern):
        make(keras.layers)
    with pytest.raises(ValueError, match=pattern):
        make(tl.layers)


@pytest.mark.parametrize("make", [
    lambda L, k: L.Conv2D(2, 3, kernel_regularizer=k.regularizers.L2(0.01),
                          bias_regularizer="l1", activity_regularizer="l2",
                          kernel_constraint="non_neg"),
    lambda L, k: L.SeparableConv1D(2, 3, depthwise_regularizer="l2",
                                   pointwise_regularizer=k.regularizers.L1(0.1)),
    lambda L, k: L.Conv1DTranspose(2, 3, kernel_regularizer="l1"),
    lambda L, k: L.PReLU(alpha_regularizer="l2", alpha_initializer="ones"),
    lambda L, k: L.ActivityRegularization(l1=0.1, l2=0.2),
])
def test_regularizers_and_constraints_like_keras(make):
    klayer, tlayer = make(keras.layers, keras), make(tl.layers, tl.keras)
    shape = (2, 6, 6, 3) if isinstance(klayer, keras.layers.Conv2D) else (2, 6, 3)
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    klayer(x)
    tlayer(x)
    tlayer.set_weights(klayer.get_weights())
    kl = sum(float(v) for v in klayer.losses)
    tlayer(x)   # the activity penalty of a call with Keras's weights
    tl_losses = sum(float(v) for v in tlayer.losses)
    assert kl > 0
    close(kl, tl_losses, "regularization losses", RTOL, ATOL)
    kconfig, tconfig = klayer.get_config(), tlayer.get_config()
    kconfig.pop("name"), tconfig.pop("name")
    assert tconfig == kconfig
