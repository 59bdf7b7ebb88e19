"""Convolution layer train steps (Conv1D, Conv2DTranspose, DepthwiseConv2D, SeparableConv2D,
Conv3D): trainlib's tl.function against TensorFlow's tf.function (Keras 3 layers), side by
side in one run, same weights and data.

Each step: forward through the layer, mean-squared error against zeros, the gradients of
kernel and bias, and an SGD update of both. numpy's BLAS threads matter on a busy machine:
OPENBLAS_NUM_THREADS=1 avoids oversubscription when other processes hold the cores.

Run: python bench/conv_layers.py            (trainlib only)
     ~/tfref/bin/python bench/conv_layers.py (adds TensorFlow when it imports)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_us  # noqa: E402

import trainlib as tl  # noqa: E402

LR = 0.01
CASES = {
    # name: (layer factory over a layers module, input shape)
    "Conv1D(64, 5, same) on (32, 128, 32)":
        (lambda L: L.Conv1D(64, 5, padding="same"), (32, 128, 32)),
    "Conv2DTranspose(16, 3, strides=2, same) on (32, 16, 16, 32)":
        (lambda L: L.Conv2DTranspose(16, 3, strides=2, padding="same"), (32, 16, 16, 32)),
    "DepthwiseConv2D(3, same) on (32, 32, 32, 32)":
        (lambda L: L.DepthwiseConv2D(3, padding="same"), (32, 32, 32, 32)),
    "SeparableConv2D(64, 3, same) on (32, 32, 32, 32)":
        (lambda L: L.SeparableConv2D(64, 3, padding="same"), (32, 32, 32, 32)),
    "Conv3D(16, 3) on (8, 16, 16, 16, 8)": (lambda L: L.Conv3D(16, 3), (8, 16, 16, 16, 8)),
}


def trainlib_step(make, x, weights):
    layer = make(tl.layers)
    layer(x[:1])
    layer.set_weights(weights)
    target = tl.zeros_like(layer(x))

    @tl.function
    def step(x):
        with tl.GradientTape() as tape:
            loss = tl.reduce_mean(tl.square(layer(x) - target))
        grads = tape.gradient(loss, layer.trainable_weights)
        for v, g in zip(layer.trainable_weights, grads):
            v.assign_sub(LR * g)
        return loss

    xt = tl.constant(x)
    step(xt)
    return lambda: step(xt).numpy()


def tensorflow_step(make, x, weights):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras  # noqa: PLC0415
    import tensorflow as tf  # noqa: PLC0415
    layer = make(keras.layers)
    layer(x[:1])
    layer.set_weights(weights)
    target = tf.zeros_like(layer(x))

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(layer(x) - target))
        grads = tape.gradient(loss, layer.trainable_weights)
        for v, g in zip(layer.trainable_weights, grads):
            v.assign_sub(LR * g)
        return loss

    xt = tf.constant(x)
    step(xt)
    return lambda: step(xt).numpy()


def main():
    try:
        import tensorflow  # noqa: F401,PLC0415
        have_tf = True
    except ImportError:
        have_tf = False
        print("TensorFlow is not installed here: trainlib only (run it under ~/tfref for both)")
    rng = np.random.default_rng(0)
    for name, (make, shape) in CASES.items():
        x = rng.standard_normal(shape).astype(np.float32)
        probe = make(tl.layers)
        probe(x[:1])
        weights = [rng.standard_normal(w.shape).astype(np.float32) * 0.1
                   for w in probe.get_weights()]
        tl_fn = trainlib_step(make, x, weights)
        line = f"{name}: trainlib {median_us(tl_fn) / 1e3:.2f} ms/step"
        if have_tf:
            tf_fn = tensorflow_step(make, x, weights)
            tl_us, tf_us = median_us(tl_fn), median_us(tf_fn)
            line = (f"{name}: trainlib {tl_us / 1e3:.2f} ms/step, tf.function {tf_us / 1e3:.2f} "
                    f"ms/step, ratio {tl_us / tf_us:.2f}x")
        print(line)


if __name__ == "__main__":
    main()
