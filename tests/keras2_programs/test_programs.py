"""The tf.keras 2 programs of this directory run unchanged with `from trainlib import keras`
(each asserts its own results; the deprecation warnings of the tf.keras 2 names are expected,
and checked to name the replacement).

Each program runs in this process with `runpy` (as `python program.py` would run it), so the
package is imported once.
"""
import pathlib
import runpy
import warnings

import pytest

PROGRAMS = sorted(p for p in pathlib.Path(__file__).parent.glob("*.py")
                  if not p.name.startswith(("test_", "__")))


def test_the_directory_holds_the_programs():
    assert len(PROGRAMS) >= 8


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_program_runs_unchanged(path, capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out  # every program reports what it did
    for w in caught:
        if issubclass(w.category, DeprecationWarning) and "tf.keras 2" in str(w.message):
            assert "use" in str(w.message).lower(), w.message
