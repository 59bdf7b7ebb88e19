"""`trainlib.examples`: the example training scripts, runnable from an installed package.

    python -m trainlib.examples                        # list them
    python -m trainlib.examples digits_mlp --epochs 3  # run one (its flags follow its name)
    python -m trainlib.examples digits_mlp --help

Owns: the list of examples (`EXAMPLES`, in the order a newcomer should read
them) and `main`, which dispatches to `trainlib.examples.<name>.main(argv)`.
Each example is one module here with a `main(argv=None) -> exit status`;
the repository's `examples/<name>.py` files are thin wrappers around them,
so there is one copy of every script.
"""
import importlib
import sys

__all__ = ["EXAMPLES", "describe", "run", "main"]

EXAMPLES = ("quickstart", "digits_mlp", "digits_cnn", "digits_rnn", "custom_training_loop",
            "regression", "text_classification", "graphs_and_functions")


def describe(name):
    """The first line of the example's docstring."""
    doc = importlib.import_module(f"{__name__}.{name}").__doc__ or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def run(name, argv=()):
    """Runs example `name` with command-line arguments `argv`; returns its exit status.

    Raises:
        ValueError: for a name that is not in `EXAMPLES`.
    """
    if name not in EXAMPLES:
        raise ValueError(f"Unknown example {name!r}; expected one of: {', '.join(EXAMPLES)}")
    return importlib.import_module(f"{__name__}.{name}").main(list(argv))


def main(argv=None):
    """`python -m trainlib.examples [NAME [ARGS...]]`: lists the examples, or runs one."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help", "--list", "list"):
        print("usage: python -m trainlib.examples NAME [--help | ARGS...]\n\nexamples:")
        for name in EXAMPLES:
            print(f"  {name:22} {describe(name)}")
        return 0
    if argv[0] not in EXAMPLES:
        print(f"unknown example {argv[0]!r}; run `python -m trainlib.examples` for the list",
              file=sys.stderr)
        return 2
    return run(argv[0], argv[1:])
