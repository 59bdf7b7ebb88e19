"""keras.utils.Progbar (trainlib/progbar.py): Keras's averaging written out by hand, the verbose
modes, unknown targets, and where the output goes (stdout, or the "trainlib" logger)."""
import logging
import re

import pytest

from trainlib import keras
from trainlib.keras.utils import Progbar

LINE = r"(\d+)/(\d+) - \d+s - \d+(?:ms|us|s)/step((?: - \w+: -?[\d.e+-]+)*)"


def _shown(line):
    """{name: value} of a verbose=2 line."""
    match = re.fullmatch(LINE, line.strip())
    assert match, line
    return {k: float(v) for k, v in re.findall(r" - (\w+): (-?[\d.e+-]+)", match.group(3))}


def test_values_are_averaged_over_the_steps_they_cover_unless_stateful(capsys):
    bar = Progbar(target=6, verbose=2, stateful_metrics=["acc"])
    bar.update(1, [("loss", 4.0), ("acc", 0.1)])
    bar.update(4, [("loss", 1.0), ("acc", 0.5)])       # covers steps 2..4: weight 3
    assert capsys.readouterr().out == ""                # verbose=2 prints when finalized only
    bar.add(1, [("loss", 2.0), ("acc", 0.7)])
    bar.update(6, [("acc", 0.9)])
    shown = _shown(capsys.readouterr().out)
    assert shown["acc"] == 0.9
    assert shown["loss"] == pytest.approx(round((4.0 * 1 + 1.0 * 3 + 2.0 * 1) / 5, 4))
    assert bar._seen_so_far == 6


def test_stateless_metrics_names_the_averaged_ones_and_finalize_shows_values_as_given(capsys):
    bar = Progbar(target=None, verbose=2, stateless_metrics=["loss"])
    bar.update(1, [("loss", 1.0), ("lr", 0.1)])
    bar.update(3, [("loss", 4.0), ("lr", 0.2)])
    assert capsys.readouterr().out == ""                # no target: nothing until the end
    bar.target = 3
    bar.update(3, [("lr", 0.3)], finalize=True)
    shown = _shown(capsys.readouterr().out)
    assert shown == {"loss": pytest.approx(3.0), "lr": pytest.approx(0.3)}
    bar.update(3, [("loss", 7.0)], finalize=True)       # a final value replaces the average
    assert _shown(capsys.readouterr().out)["loss"] == 7.0
    with pytest.raises(ValueError, match="Only one of"):
        Progbar(3, stateful_metrics=["a"], stateless_metrics=["b"])


def test_small_values_print_in_scientific_notation_and_verbose_0_prints_nothing(capsys):
    bar = Progbar(target=1, verbose=2)
    bar.update(1, [("tiny", 2e-5)])
    assert " - tiny: 2.0000e-05" in capsys.readouterr().out
    quiet = Progbar(target=2, verbose=0)
    quiet.update(1, [("loss", 1.0)])
    quiet.update(2, [("loss", 1.0)])
    assert capsys.readouterr().out == ""


def test_verbose_1_draws_a_bar_on_stdout_or_logs_lines(capsys, caplog):
    bar = Progbar(target=3, verbose=1, interval=0)
    for step in range(1, 4):
        bar.update(step, [("loss", float(step))])
    out = capsys.readouterr().out
    assert "3/3" in out and "loss=3.0000" in out        # the tqdm bar; the final value as given
    keras.config.disable_interactive_logging()
    try:
        with caplog.at_level(logging.INFO, logger="trainlib"):
            bar = Progbar(target=3, verbose=1, interval=0)
            bar.update(1, [("loss", 1.0)])
            bar.update(2, [("loss", 3.0)])
            bar.update(3, [("loss", 5.0)])
    finally:
        keras.config.enable_interactive_logging()
    assert capsys.readouterr().out == ""
    lines = [r.getMessage() for r in caplog.records if r.name == "trainlib"]
    assert [line[:4] for line in lines] == ["1/3 ", "2/3 ", "3/3 "]
    assert lines[1].endswith(" - loss: 2.0000")          # the mean so far
    assert lines[2].endswith(" - loss: 5.0000")          # the final value as given
    unknown = Progbar(target=None, verbose=1, interval=0)
    with caplog.at_level(logging.INFO, logger="trainlib"):
        keras.config.disable_interactive_logging()
        try:
            unknown.update(5)
        finally:
            keras.config.enable_interactive_logging()
    assert caplog.records[-1].getMessage().startswith("      5/Unknown")
