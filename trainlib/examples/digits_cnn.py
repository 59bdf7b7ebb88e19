"""Digits CNN: Conv2D, MaxPooling2D, BatchNormalization and Dropout on 8x8 digit images.

Shows: a convolutional Sequential model over NHWC images (batch, height,
width, channels), batch normalization (which behaves differently in training
and inference: fit and evaluate pass `training` for you), and a learning-rate
schedule. The data ships with scikit-learn (no download).

    python examples/digits_cnn.py --epochs 10 --plot cnn.png
"""
import sys

import numpy as np

import trainlib as tl
from trainlib.examples import _cli


def load_data(seed):
    """Digits as (n, 8, 8, 1) float32 images in [0, 1], split 80/20 into train and test."""
    _cli.require("sklearn", "the digits data set")
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[..., None]  # add the channel axis: NHWC
    y = digits.target.astype(np.int32)
    return train_test_split(x, y, test_size=0.2, random_state=seed, stratify=y)


def build_model():
    return tl.Sequential([
        tl.layers.Input(shape=(8, 8, 1)),
        tl.layers.Conv2D(16, 3, padding="same", use_bias=False),  # BN's beta replaces the bias
        tl.layers.BatchNormalization(),
        tl.layers.Activation("relu"),
        tl.layers.MaxPooling2D(2),                                 # 8x8 -> 4x4
        tl.layers.Conv2D(32, 3, padding="same", activation="relu"),
        tl.layers.MaxPooling2D(2),                                 # 4x4 -> 2x2
        tl.layers.Flatten(),
        tl.layers.Dropout(0.3),
        tl.layers.Dense(10),
    ])


def main(argv=None):
    p = _cli.parser(__doc__, epochs=12, batch_size=32, learning_rate=3e-3, min_accuracy=0.95)
    args = _cli.parse(p, argv)
    with _cli.session(args):
        x_train, x_test, y_train, y_test = load_data(args.seed)
        model = build_model()
        steps_per_epoch = _cli.steps_per_epoch(len(x_train), args.batch_size, 0.1)
        # decay the learning rate smoothly over the whole run
        schedule = tl.optim.schedules.CosineDecay(args.learning_rate, args.epochs * steps_per_epoch)
        _cli.compile_classifier(model, tl.optim.Adam(schedule), args)
        _, test, seconds = _cli.fit_and_test(
            model, args, (x_train, y_train), (x_test, y_test), "digits CNN",
            [tl.TensorSpec([None, 8, 8, 1], tl.float32)], validation_split=0.1)
    return _cli.report("digits_cnn", seconds, args.epochs * steps_per_epoch, test["accuracy"],
                       args.min_accuracy)


if __name__ == "__main__":
    sys.exit(main())
