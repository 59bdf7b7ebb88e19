"""Digits MLP: a Sequential model on scikit-learn's 8x8 digits, trained with fit().

Shows: tl.Sequential, compile/fit with a validation set, EarlyStopping,
evaluate on held-out test data. The data ships with scikit-learn (no download).

    python examples/digits_mlp.py --epochs 30 --plot curves.png --save digits.npz
"""
import sys

import numpy as np

import trainlib as tl
from trainlib.examples import _cli


def load_data(seed):
    """Digits scaled to [0, 1], split 80/20 into train and test (stratified)."""
    _cli.require("sklearn", "the digits data set")
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)  # pixel values are 0..16
    y = digits.target.astype(np.int32)
    return train_test_split(x, y, test_size=0.2, random_state=seed, stratify=y)


def build_model():
    return tl.Sequential([
        tl.layers.Input(shape=(64,)),
        tl.layers.Dense(128, activation="relu"),
        tl.layers.Dropout(0.2),  # the data set is small: regularize
        tl.layers.Dense(10),     # logits; the loss applies the softmax (more stable)
    ])


def main(argv=None):
    p = _cli.parser(__doc__, epochs=40, batch_size=32, learning_rate=1e-3, min_accuracy=0.95,
                    prog="digits_mlp", distributed=True)
    args = _cli.parse(p, argv)
    with _cli.session(args) as strategy:
        x_train, x_test, y_train, y_test = load_data(args.seed)
        with strategy.scope():  # with --distributed, every rank starts from rank 0's weights
            model = build_model()
            model.compile(optimizer=tl.optim.Adam(args.learning_rate),
                          loss=tl.losses.SparseCategoricalCrossentropy(from_logits=True),
                          metrics=["accuracy"], run_eagerly=args.eager, jit_compile=args.jit)
        # stop when validation loss stops improving, and keep the best weights seen
        early = tl.callbacks.EarlyStopping(monitor="val_loss", patience=5, restore_best_weights=True)
        history, test, seconds = _cli.fit_and_test(
            model, args, (x_train, y_train), (x_test, y_test), "digits MLP",
            [tl.TensorSpec([None, 64], tl.float32)], validation_split=0.1, callbacks=[early])
    epochs_run = len(history.history["loss"])
    steps = epochs_run * _cli.steps_per_epoch(len(x_train), args.batch_size, 0.1)
    return _cli.report("digits_mlp", seconds, steps, test["accuracy"], args.min_accuracy,
                       epochs=epochs_run)


if __name__ == "__main__":
    sys.exit(main())
