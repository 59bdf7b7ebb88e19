"""Text classification: Embedding + masked mean pooling + Dense on synthetic movie reviews.

Shows: turning sentences into padded integer sequences with a vocabulary,
an Embedding layer, a subclassed tl.Model whose call() averages the word
vectors of the real words (padding masked out), and binary cross-entropy.
The data is generated from a seed: each review mixes neutral words with a few
words from a positive or a negative vocabulary (and sometimes one from the
other side, so that a single word does not decide the label).

    python examples/text_classification.py --epochs 10 --plot text.png
"""
import sys

import numpy as np

import trainlib as tl
from trainlib.examples import _cli

NEUTRAL = ("the movie film was a and it plot actors i this story of in to director scene "
           "ending music with".split())
POSITIVE = "great good love excellent fun wonderful enjoyed brilliant moving beautiful".split()
NEGATIVE = "bad awful hate boring terrible dull waste poor predictable mess".split()
PAD, MAX_LEN = "<pad>", 16
VOCAB = [PAD] + NEUTRAL + POSITIVE + NEGATIVE   # index 0 is padding


def make_reviews(n, rng):
    """n (sentence, label) pairs: label 1 draws sentiment words from POSITIVE, 0 from NEGATIVE."""
    reviews = []
    for _ in range(n):
        label = int(rng.integers(2))
        own, other = (POSITIVE, NEGATIVE) if label else (NEGATIVE, POSITIVE)
        words = list(rng.choice(NEUTRAL, size=rng.integers(4, MAX_LEN - 3)))
        words += list(rng.choice(own, size=rng.integers(1, 4)))
        if rng.random() < 0.3:
            words.append(str(rng.choice(other)))
        rng.shuffle(words)
        reviews.append((" ".join(words), label))
    return reviews


def review_data(samples, seed, rewrite=None):
    """(sentences, labels as a float32 column) of `samples` reviews drawn with `seed`, the
    first three printed; `rewrite(sentence, rng)`, if given, changes each sentence."""
    rng = np.random.default_rng(seed)
    reviews = make_reviews(samples, rng)
    if rewrite is not None:
        reviews = [(rewrite(text, rng), label) for text, label in reviews]
    print("examples:", *[f"  {label} | {text}" for text, label in reviews[:3]], sep="\n")
    labels = np.array([label for _, label in reviews], np.float32)[:, None]
    return [text for text, _ in reviews], labels


def encode(sentences):
    """Sentences -> (n, MAX_LEN) int32 word indices, padded with 0 at the end."""
    index = {word: i for i, word in enumerate(VOCAB)}
    out = np.zeros((len(sentences), MAX_LEN), np.int32)
    for row, sentence in enumerate(sentences):
        ids = [index[w] for w in sentence.split()][:MAX_LEN]
        out[row, :len(ids)] = ids
    return out


class TextClassifier(tl.Model):
    """Mean of the word embeddings of the non-padding words, then a small classifier."""

    def __init__(self, vocab_size, dim=16, **kwargs):
        super().__init__(**kwargs)
        self.embedding = tl.layers.Embedding(vocab_size, dim)
        self.hidden = tl.layers.Dense(16, activation="relu")
        self.classifier = tl.layers.Dense(1)  # a logit: > 0 means positive

    def call(self, tokens, training=False):
        vectors = self.embedding(tokens)                               # (batch, time, dim)
        mask = tl.cast(tl.not_equal(tokens, 0), tl.float32)[..., None]  # 1 for words, 0 for padding
        # average over the real words only, so review length does not change the scale
        pooled = tl.reduce_sum(vectors * mask, axis=1) / tl.maximum(tl.reduce_sum(mask, axis=1), 1.0)
        return self.classifier(self.hidden(pooled))


def main(argv=None):
    p = _cli.parser(__doc__, epochs=10, batch_size=32, learning_rate=1e-2, min_accuracy=0.9)
    p.add_argument("--samples", type=int, default=2000, help="reviews to generate (default 2000)")
    args = _cli.parse(p, argv)
    with _cli.session(args):
        sentences, y = review_data(args.samples, args.seed)
        x = encode(sentences)
        split = int(0.8 * len(x))
        x_train, y_train, x_test, y_test = x[:split], y[:split], x[split:], y[split:]

        model = TextClassifier(len(VOCAB))
        model.compile(optimizer=tl.optim.Adam(args.learning_rate),
                      loss=tl.losses.BinaryCrossentropy(from_logits=True),
                      metrics=[tl.metrics.BinaryAccuracy(threshold=0.0)],  # threshold on logits
                      run_eagerly=args.eager, jit_compile=args.jit)
        with _cli.Timer() as t:
            history = model.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs,
                                validation_split=0.1, verbose=0 if args.quiet else 1)
        test = model.evaluate(x_test, y_test, verbose=0, return_dict=True)
        accuracy = test["binary_accuracy"]
        if args.plot:
            _cli.plot_history(history.history, args.plot, "synthetic review sentiment")
        if args.save:
            _cli.save(model, args.save, [tl.TensorSpec([None, MAX_LEN], tl.int32)])
    steps = args.epochs * -(-int(len(x_train) * 0.9) // args.batch_size)
    return _cli.report("text_classification", t.seconds, steps, accuracy, args.min_accuracy)


if __name__ == "__main__":
    sys.exit(main())
