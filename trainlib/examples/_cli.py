"""What every example's command line shares: flags, the run's settings, plots, saving, the summary.

Owns: `parser()` (the common flags), `session(args)` (seed, eager mode and
device for the length of one run, restored afterwards so that examples can run
one after another in one process), `compile_classifier`, `fit_and_test` (the
timed fit, the test evaluation, and the plot and save the flags ask for),
`plot_history`, `save`, `summary`, `check`, `report`.
Invariants: nothing here changes global state outside `session`; a missing
optional package (matplotlib, a GPU) is reported before any training starts;
under a distributed strategy only the chief saves and prints the summary.
"""
import argparse
import contextlib
import importlib.util
import sys
import time

import trainlib as tl

SUMMARY_PREFIX = "summary:"


def parser(doc, epochs, batch_size, learning_rate, min_accuracy=None, prog=None, distributed=False):
    """An ArgumentParser with the flags every example takes; `doc` is the module docstring."""
    lines = doc.strip().splitlines()
    p = argparse.ArgumentParser(prog=prog, description=lines[0],
                                epilog="\n".join(lines[1:]).strip() or None,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epochs", type=int, default=epochs, help=f"passes over the data (default {epochs})")
    p.add_argument("--batch-size", type=int, default=batch_size, help=f"default {batch_size}")
    p.add_argument("--learning-rate", type=float, default=learning_rate, help=f"default {learning_rate}")
    p.add_argument("--seed", type=int, default=0, help="seed for data splits and weights (default 0)")
    p.add_argument("--eager", action="store_true", help="run without graphs (to compare speed)")
    p.add_argument("--jit", action="store_true", help="compile steps with jit_compile=True")
    p.add_argument("--device", choices=("cpu", "gpu"), default="cpu", help="default cpu")
    p.add_argument("--plot", metavar="PATH", help="write training curves to this PNG (needs matplotlib)")
    p.add_argument("--save", metavar="PATH",
                   help="save the trained model: PATH.npz writes the weights, any other PATH a "
                        "saved-model directory (tl.saved_model) that runs without this script")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    if distributed:  # only examples written for a strategy take the flag
        p.add_argument("--distributed", action="store_true",
                       help="data-parallel over MPI: mpirun -n N python SCRIPT --distributed "
                            "(needs pip install 'trainlib[distributed]'; batch size is global)")
    if min_accuracy is not None:
        # None: the default floor, judged only on a run with the default training settings
        p.add_argument("--min-accuracy", type=float, default=None,
                       help=f"exit with status 1 below this test accuracy (default: "
                            f"{min_accuracy} on a run with the default settings; a shortened "
                            "or changed run only reports its accuracy)")
        p.set_defaults(default_floor=min_accuracy)
    return p


# flags that change how a run executes or what it writes, not what it learns: a run that sets
# only these is still a default run, judged by the default floor
_NOT_TRAINING = frozenset({"eager", "jit", "device", "plot", "save", "quiet", "distributed",
                           "min_accuracy", "default_floor", "default_run"})


def is_default_run(p, args, not_training=()):
    """Whether every training setting of `args` (epochs, batch size, learning rate, seed and
    the example's own flags, except those named in `not_training`) has its default value."""
    skip = _NOT_TRAINING | set(not_training)
    return all(getattr(args, name) == p.get_default(name) for name in vars(args)
               if name not in skip)


def parse(p, argv, not_training=()):
    """Parses argv and rejects what cannot work here before any training starts.

    Sets `args.default_run` (every training setting at its default: only such a run is judged
    by the example's default floor) and `args.min_accuracy` (the floor to judge by: a given
    --min-accuracy, the default floor on a default run, else None). `not_training` names the
    example's own flags that do not change what the model learns (an output path, a count of
    timed steps)."""
    args = p.parse_args(argv)
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        p.error("--plot needs matplotlib, which is not installed: pip install 'trainlib[examples]' "
                "(or pip install matplotlib)")
    if args.epochs < 1 or args.batch_size < 1:
        p.error("--epochs and --batch-size must be at least 1")
    args.default_run = is_default_run(p, args, not_training)
    if getattr(args, "default_floor", None) is not None and args.min_accuracy is None:
        # the floor judges default runs only; a user's quick try (--epochs 1) reports and passes
        args.min_accuracy = args.default_floor if args.default_run else None
    return args


def require(module, why):
    """Exits with the pip command to run if the optional package `module` is missing."""
    if importlib.util.find_spec(module) is None:
        raise SystemExit(f"{why} needs {module}, which is not installed: "
                         "pip install 'trainlib[examples]'")


@contextlib.contextmanager
def session(args):
    """Seeds, eager/graph mode and device for one run; everything is restored on exit."""
    import numpy as np  # noqa: PLC0415
    was_eager = tl.config.functions_run_eagerly()
    try:
        # an explicit --device gpu is not softly placed: without a GPU, the RuntimeError says
        # how to get one (install CuPy, or use --device cpu)
        was_soft = tl.config.get_soft_device_placement()
        tl.config.set_soft_device_placement(False)
        try:
            device = tl.device(args.device)
            device.__enter__()
        finally:
            tl.config.set_soft_device_placement(was_soft)
    except RuntimeError as e:
        raise SystemExit(f"--device {args.device}: {e}") from None
    try:
        tl.random.set_seed(args.seed)
        np.random.seed(args.seed)  # fit's shuffling draws from numpy
        tl.config.run_functions_eagerly(args.eager)
        try:
            strategy = tl.distribute.maybe_strategy(getattr(args, "distributed", False))
        except ImportError as e:
            raise SystemExit(f"--distributed: {e}") from None
        yield strategy
    finally:
        tl.config.run_functions_eagerly(was_eager)
        device.__exit__(None, None, None)


class Timer:
    """Wall time of a block: `with Timer() as t: ...; t.seconds`."""

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start


def steps_per_epoch(n_train, batch_size, validation_split=0.0):
    """The optimizer steps of one epoch of `fit` on `n_train` samples (the validation part
    held out, as `fit(validation_split=...)` does)."""
    return -(-int(n_train * (1.0 - validation_split)) // batch_size)


def compile_classifier(model, optimizer, args):
    """Compiles `model` (logits over classes) for integer labels: sparse softmax cross-entropy
    and accuracy, run as the flags ask (`--eager`, `--jit`); prints its summary unless
    `--quiet`."""
    model.compile(optimizer=optimizer,
                  loss=tl.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], run_eagerly=args.eager, jit_compile=args.jit)
    if not args.quiet:
        model.summary()


def fit_and_test(model, args, train, test, title, input_signature=None, **fit_kwargs):
    """Fits `model` on `train` (x, y) with the flags' epochs, batch size and verbosity
    (timed), evaluates it on `test` (x, y), then plots (`--plot`, titled `title`) and saves
    (`--save`, with `input_signature`) as the flags ask.

    Returns:
        (the History, the test metrics as a dict, the seconds `fit` took).
    """
    with Timer() as t:
        history = model.fit(*train, batch_size=args.batch_size, epochs=args.epochs,
                            verbose=0 if args.quiet else 1, **fit_kwargs)
    results = model.evaluate(*test, verbose=0, return_dict=True)
    if args.plot:
        plot_history(history.history, args.plot, title)
    if args.save:
        save(model, args.save, input_signature)
    return history, results, t.seconds


def plot_history(history, path, title):
    """Writes one panel per metric (train and validation curves) to a PNG at `path`."""
    import matplotlib  # noqa: PLC0415
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt  # noqa: PLC0415
    names = [k for k in history if not k.startswith("val_")]
    fig, axes = plt.subplots(1, len(names), figsize=(4.5 * len(names), 3.5), squeeze=False)
    for ax, name in zip(axes[0], names):
        epochs = range(1, len(history[name]) + 1)
        ax.plot(epochs, history[name], marker=".", label="train")
        if "val_" + name in history:
            ax.plot(range(1, len(history["val_" + name]) + 1), history["val_" + name], marker=".",
                    label="validation")
        ax.set_xlabel("epoch")
        ax.set_title(name)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"training curves written to {path}")


def save(model, path, input_signature=None):
    """Saves weights (`.npz`) or a saved-model directory (anything else); on the chief only."""
    if not tl.distribute.is_chief():
        return
    path = str(path)
    if path.endswith(".npz"):
        model.save_weights(path)
        print(f"weights written to {path} (model.load_weights({path!r}) reads them)")
        return
    tl.saving.save_model(model, path, input_signature=input_signature)
    if path.endswith(".keras"):
        print(f"model written to {path} (tl.saving.load_model({path!r}) gives it back, "
              "ready to predict or train on)")
    else:
        print(f"saved model written to {path} (tl.saving.load_model({path!r}).serve(x) runs it)")


def summary(name, seconds, steps, **metrics):
    """Prints the run's one-line summary: `summary: <name> key=value ... time=..s steps/s=..`
    (on the chief only)."""
    if not tl.distribute.is_chief():
        return
    parts = [f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in metrics.items()]
    parts += [f"time={seconds:.2f}s", f"steps={steps}", f"steps/s={steps / max(seconds, 1e-9):.0f}"]
    print(SUMMARY_PREFIX, name, " ".join(parts))
    sys.stdout.flush()


def report(name, seconds, steps, accuracy, floor, **metrics):
    """The summary line of a classifier's run (its test accuracy, then `metrics`) and the exit
    status `check` gives it."""
    summary(name, seconds, steps, test_accuracy=accuracy, **metrics)
    return check(name, accuracy, floor)


def check(name, accuracy, floor):
    """0 if accuracy reaches the floor (or there is none: None), else 1 (with a message on
    stderr)."""
    if floor is not None and accuracy < floor:
        print(f"{name}: FAILED: accuracy {accuracy:.4f} is below the floor {floor}", file=sys.stderr)
        return 1
    return 0
