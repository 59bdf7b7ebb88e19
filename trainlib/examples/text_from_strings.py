"""Text classification from raw strings: TextVectorization inside the model, served on strings.

Shows: a string Input, a TextVectorization layer adapted on the training sentences
(vocabulary learned, lowercasing and punctuation stripping included), Embedding +
pooling + Dense, training on raw sentences, and export with tl.saved_model: a fresh
Python process (without this script's code) loads the directory and classifies raw
strings. The reviews are synthetic (see text_classification.py), punctuated and
capitalised at random so that standardization has work to do.

    python -m trainlib.examples text_from_strings --epochs 8 --save reviews_model
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

import trainlib as tl
from trainlib.examples import _cli
from trainlib.examples.text_classification import review_data

SERVE = """
import sys
import trainlib as tl
serve = tl.saved_model.load(sys.argv[1]).signatures["serving_default"]
out = serve(tl.constant([[line] for line in sys.argv[2:]]))
for p in list(out.values())[0].numpy()[:, 0]:
    print(f"{p:.4f}")
"""


def punctuate(text, rng):
    """The sentence with a capital letter and some punctuation, as people write."""
    words = text.split()
    words[0] = words[0].capitalize()
    if rng.random() < 0.5:
        words[rng.integers(len(words))] += ","
    return " ".join(words) + str(rng.choice([".", "!", "?", "..."]))


def build_model(vectorize, dim=16):
    """String sentences (batch, 1) -> logit (batch, 1)."""
    text = tl.layers.Input(shape=(1,), dtype="string")
    ids = vectorize(text)
    vectors = tl.layers.Embedding(vectorize.vocabulary_size(), dim)(ids)
    pooled = tl.layers.GlobalAveragePooling1D()(vectors)
    hidden = tl.layers.Dense(16, activation="relu")(pooled)
    return tl.Model(text, tl.layers.Dense(1)(hidden))


def serve_in_fresh_process(folder, sentences):
    """Logits from a new interpreter that only loads the saved model."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, "-c", SERVE, folder, *sentences], capture_output=True,
                          text=True, env=env, cwd=tempfile.gettempdir(), timeout=300)
    if done.returncode:
        raise RuntimeError(f"serving failed:\n{done.stderr[-2000:]}")
    return [float(v) for v in done.stdout.split()]


def main(argv=None):
    p = _cli.parser(__doc__, epochs=8, batch_size=32, learning_rate=1e-2, min_accuracy=0.9)
    p.add_argument("--samples", type=int, default=2000, help="reviews to generate (default 2000)")
    args = _cli.parse(p, argv)
    with _cli.session(args):
        sentences, y = review_data(args.samples, args.seed, rewrite=punctuate)
        x = np.array([[text] for text in sentences])
        split = int(0.8 * len(x))
        vectorize = tl.layers.TextVectorization(max_tokens=200, output_sequence_length=16)
        vectorize.adapt(x[:split, 0])
        model = build_model(vectorize)
        model.compile(optimizer=tl.optim.Adam(args.learning_rate),
                      loss=tl.losses.BinaryCrossentropy(from_logits=True),
                      metrics=[tl.metrics.BinaryAccuracy(threshold=0.0)],
                      run_eagerly=args.eager, jit_compile=args.jit)
        with _cli.Timer() as t:
            model.fit(x[:split], y[:split], batch_size=args.batch_size, epochs=args.epochs,
                      verbose=0 if args.quiet else 1)
        accuracy = model.evaluate(x[split:], y[split:], verbose=0, return_dict=True)[
            "binary_accuracy"]
        folder = args.save or tempfile.mkdtemp(prefix="text_from_strings_")
        tl.saved_model.save(model, folder)
        probe = ["What a wonderful, moving film!", "Boring. A total waste..."]
        served = serve_in_fresh_process(folder, probe)   # logits
        local = model.predict(np.array([[s] for s in probe]), verbose=0)[:, 0]
        for sentence, logit in zip(probe, served):
            print(f"served in a fresh process: {1 / (1 + np.exp(-logit)):.3f} positive | {sentence}")
        if not np.allclose(served, local, atol=1e-4):
            print(f"text_from_strings: FAILED: served {served} but the model gives {local}",
                  file=sys.stderr)
            return 1
    steps = args.epochs * -(-split // args.batch_size)
    return _cli.report("text_from_strings", t.seconds, steps, accuracy, args.min_accuracy)


if __name__ == "__main__":
    sys.exit(main())
