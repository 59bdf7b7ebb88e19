"""Digits ResNet: residual Add blocks, SeparableConv2D and GlobalAveragePooling2D on 8x8 digits.

Shows: a functional model (tl.layers.Input ... tl.Model) whose residual
blocks join two paths with `tl.layers.add`, a depthwise-separable convolution,
global average pooling in place of Flatten, and augmentation layers: small
random rotations and shifts (RandomRotation, RandomTranslation) and GaussianNoise,
active only while training (fit turns them on, evaluate and predict leave the
images as they are). The data ships with scikit-learn.

    python examples/digits_resnet.py --epochs 12 --plot resnet.png
"""
import sys

import trainlib as tl
from trainlib.examples import _cli
from trainlib.examples.digits_cnn import load_data

layers = tl.layers


def residual_block(x, filters):
    """x + conv(relu(conv(x))), then relu: the shortcut lets the gradient skip the block."""
    h = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
    h = layers.SeparableConv2D(filters, 3, padding="same")(h)
    return layers.ReLU()(layers.add([x, h]))


def build_model(width=24):
    inputs = layers.Input(shape=(8, 8, 1))
    # augmentation (training only): up to +-7 degrees, +-0.4 pixel shifts, noise
    x = layers.RandomRotation(0.02, fill_mode="constant")(inputs)
    x = layers.RandomTranslation(0.05, 0.05, fill_mode="constant")(x)
    x = layers.GaussianNoise(0.1)(x)
    x = layers.Conv2D(width, 3, padding="same", activation="relu")(x)
    x = residual_block(x, width)
    x = layers.MaxPooling2D(2)(x)                                   # 8x8 -> 4x4
    x = layers.Conv2D(2 * width, 1)(x)                              # widen the channels
    x = residual_block(x, 2 * width)
    x = layers.GlobalAveragePooling2D()(x)                          # one value per channel
    return tl.Model(inputs, layers.Dense(10)(x), name="digits_resnet")


def main(argv=None):
    p = _cli.parser(__doc__, epochs=12, batch_size=32, learning_rate=3e-3, min_accuracy=0.93)
    args = _cli.parse(p, argv)
    with _cli.session(args):
        x_train, x_test, y_train, y_test = load_data(args.seed)
        model = build_model()
        _cli.compile_classifier(model, tl.optim.Adam(args.learning_rate), args)
        _, test, seconds = _cli.fit_and_test(
            model, args, (x_train, y_train), (x_test, y_test), "digits ResNet",
            [tl.TensorSpec([None, 8, 8, 1], tl.float32)], validation_split=0.1)
    steps = args.epochs * _cli.steps_per_epoch(len(x_train), args.batch_size, 0.1)
    return _cli.report("digits_resnet", seconds, steps, test["accuracy"], args.min_accuracy)


if __name__ == "__main__":
    sys.exit(main())
