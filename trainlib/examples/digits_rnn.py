"""Digits RNN: an LSTM reads each 8x8 digit image row by row, as a sequence of 8 steps.

Shows: sequence models on (batch, time, features) inputs, `tl.layers.LSTM` with
`return_sequences=True` feeding a `Bidirectional(GRU)`, and gradient clipping
(`clipnorm`), a usual guard for recurrent nets. The data ships with
scikit-learn (no download). The accuracy floor judges runs with the default
settings (or a given --min-accuracy); a shortened run only reports its accuracy.

    python examples/digits_rnn.py --epochs 15 --plot rnn.png
"""
import sys

import numpy as np

import trainlib as tl
from trainlib.examples import _cli

EPOCHS = 12


def load_data(seed):
    """Digits as (n, 8, 8) float32 sequences in [0, 1] (8 rows of 8 pixels), split 80/20."""
    _cli.require("sklearn", "the digits data set")
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)   # (n, time=8 rows, features=8 pixels)
    y = digits.target.astype(np.int32)
    return train_test_split(x, y, test_size=0.2, random_state=seed, stratify=y)


def build_model():
    return tl.Sequential([
        tl.layers.Input(shape=(8, 8)),
        tl.layers.LSTM(48, return_sequences=True),          # one output per row
        tl.layers.Bidirectional(tl.layers.GRU(32)),         # both reading directions, concat
        tl.layers.Dense(10),
    ])


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    p = _cli.parser(__doc__, epochs=EPOCHS, batch_size=32, learning_rate=5e-3, min_accuracy=0.95)
    args = _cli.parse(p, argv)
    with _cli.session(args):
        x_train, x_test, y_train, y_test = load_data(args.seed)
        model = build_model()
        _cli.compile_classifier(model, tl.optim.Adam(args.learning_rate, clipnorm=1.0), args)
        _, test, seconds = _cli.fit_and_test(
            model, args, (x_train, y_train), (x_test, y_test), "digits RNN",
            [tl.TensorSpec([None, 8, 8], tl.float32)], validation_split=0.1)
    steps = args.epochs * _cli.steps_per_epoch(len(x_train), args.batch_size, 0.1)
    return _cli.report("digits_rnn", seconds, steps, test["accuracy"], args.min_accuracy)


if __name__ == "__main__":
    sys.exit(main())
