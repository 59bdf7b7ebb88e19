"""`keras.utils.Progbar`: the progress bar of `fit`/`evaluate`/`predict` and of custom loops.

Owns: Keras 3's Progbar API and arithmetic (`update(current, values, finalize)`, `add(n,
values)`, targets unknown until the end, metrics averaged over steps unless stateful, the
per-step time that ignores the first step) and its output: with verbose=1 a tqdm bar when
interactive logging is on (stdout), else one text line per update through
`settings.print_msg` (the "trainlib" logger); with verbose=2 Keras's single line at the end
("32/32 - 0s - 2ms/step - loss: 0.1234"); nothing with verbose=0.
Invariant: the numbers shown are the ones Keras shows for the same calls (`_averages`).
"""
import math
import sys
import time

import numpy as np

from .settings import is_interactive_logging_enabled, print_msg

__all__ = ["Progbar"]


def _format_value(value, by_magnitude=True):
    """A metric as Keras prints it: 4 decimals, or scientific at or below 1e-3 (in magnitude
    on the live bar; by value, so negatives too, on verbose=2's line, as Keras)."""
    value = float(value)
    return f"{value:.4f}" if (abs(value) if by_magnitude else value) > 1e-3 else f"{value:.4e}"


def _format_time(time_per_unit, unit_name):
    if time_per_unit >= 1 or time_per_unit == 0:
        return f" {time_per_unit:.0f}s/{unit_name}"
    if time_per_unit >= 1e-3:
        return f" {time_per_unit * 1000.0:.0f}ms/{unit_name}"
    return f" {time_per_unit * 1000000.0:.0f}us/{unit_name}"


class Progbar:
    """A progress bar for loops over steps, as Keras's `keras.utils.Progbar`.

    Args:
        target: the number of steps expected; None if unknown (the bar counts up).
        width: the bar's width in characters (text lines).
        verbose: 0 silent, 1 a live bar, 2 one line when finalized.
        interval: the least time in seconds between two verbose=1 refreshes.
        stateful_metrics: names whose values are shown as given (all others are averaged
            over the steps they were reported for). Give this or `stateless_metrics`.
        stateless_metrics: names to average; all others are shown as given.
        unit_name: what a step is called ("step" or "sample").

    Raises:
        ValueError: if both `stateful_metrics` and `stateless_metrics` are given.

    Example:
        >>> bar = keras.utils.Progbar(target=10, verbose=2)
        >>> for step in range(1, 11):
        ...     bar.update(step, values=[("loss", 1.0 / step)])
        10/10 - 0s - 0us/step - loss: 0.2929
    """

    def __init__(self, target, width=20, verbose=1, interval=0.05, stateful_metrics=None,
                 stateless_metrics=None, unit_name="step"):
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError("Only one of `stateful_metrics` or `stateless_metrics` can be "
                             "provided. `stateful_metrics` is used to make metrics stateless by "
                             "default (with an exclusion list), while `stateless_metrics` is "
                             "used to make metrics stateful by default (with an exclusion list).")
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        self.stateful_metrics = set(stateful_metrics) if stateful_metrics is not None else (
            None if stateless_metrics is not None else set())
        self.stateless_metrics = set(stateless_metrics) if stateless_metrics is not None else None
        self._seen_so_far = 0
        self._values = {}          # name -> [weighted sum, weight]
        self._values_order = []
        self._start = time.time()
        self._last_update = 0
        self._time_after_first_step = None
        self._bar = None           # the tqdm bar (verbose=1, interactive logging)

    def _is_stateless(self, name):
        if self.stateful_metrics is not None:
            return name not in self.stateful_metrics
        return name in self.stateless_metrics

    def _record(self, current, values, finalize):
        for name, value in values or []:
            if name not in self._values_order:
                self._values_order.append(name)
            if not self._is_stateless(name) or finalize:
                # a stateful value, or a final value: shown as given (as Keras)
                self._values[name] = [value, 1]
                continue
            weight = max(current - self._seen_so_far, 1)
            if name not in self._values:
                self._values[name] = [value * weight, weight]
            else:
                self._values[name][0] += value * weight
                self._values[name][1] += weight
        self._seen_so_far = current

    def _averages(self):
        """{name: the value shown}, in the order the names first came."""
        shown = {}
        for name in self._values_order:
            total, count = self._values[name]
            if not isinstance(total, float):
                total = np.mean(total)
            shown[name] = total / max(1, count)
        return shown

    def _step_time(self, current, now):
        if not current:
            return 0
        if self._time_after_first_step is not None and current > 1:
            per_step = (now - self._time_after_first_step) / (current - 1)
        else:
            per_step = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return per_step

    def _metrics_text(self, by_magnitude=True):
        return "".join(f" - {name}: {_format_value(value, by_magnitude)}"
                       for name, value in self._averages().items())

    def _count_text(self, current):
        digits = int(math.log10(self.target)) + 1
        return f"{current:{digits}d}/{self.target}"

    def _text_line(self, current, now, per_step, finalize):
        """The verbose=1 line without a terminal (Keras's text, without its colour codes)."""
        if self.target is not None and self.target > 0:
            filled = int(self.width * current / self.target)
            line = self._count_text(current) + " " + "━" * filled + " " * (self.width - filled)
        else:
            line = f"{current:7d}/Unknown"
        if self.target is not None and self.target > 0 and not finalize:
            eta = per_step * (self.target - current)
            if eta > 3600:
                eta_text = f"{int(eta // 3600)}:{int(eta % 3600 // 60):02d}:{int(eta % 60):02d}"
            elif eta > 60:
                eta_text = f"{int(eta // 60)}:{int(eta % 60):02d}"
            else:
                eta_text = f"{int(eta)}s"
        else:
            eta_text = f"{now - self._start:.0f}s"
        return f"{line} {eta_text}{_format_time(per_step, self.unit_name)}{self._metrics_text()}"

    def _show_bar(self, current, finalize):
        if self._bar is None:
            from tqdm.auto import tqdm  # noqa: PLC0415 -- only when a bar is shown
            self._bar = tqdm(total=self.target, unit=self.unit_name, file=sys.stdout,
                             leave=True, dynamic_ncols=True)
        bar = self._bar
        if self.target is None and finalize:
            bar.total = current
        bar.set_postfix({name: _format_value(value) for name, value in self._averages().items()},
                        refresh=False)
        if current != bar.n:
            bar.update(current - bar.n)      # refreshes, and keeps tqdm's rate right
        else:
            bar.refresh()
        if finalize:
            bar.close()
            self._bar = None

    def update(self, current, values=None, finalize=None):
        """Moves the bar to step `current`, recording `values` for the steps since the last
        update.

        Args:
            current: the index of the current step (1-based: steps done so far).
            values: a list of (name, value) pairs: the value for the steps since the last
                update (averaged over the epoch unless the name is stateful).
            finalize: whether this is the last update; None: `current >= target`.
        """
        if finalize is None:
            finalize = False if self.target is None else current >= self.target
        self._record(current, values, finalize)
        now = time.time()
        per_step = self._step_time(current, now)
        if self.verbose == 1:
            if now - self._last_update < self.interval and not finalize:
                return
            if is_interactive_logging_enabled():
                self._show_bar(current, finalize)
            else:
                print_msg(self._text_line(current, now, per_step, finalize))
        elif self.verbose == 2 and finalize and self.target is not None and self.target > 0:
            print_msg(f"{self._count_text(current)} - {now - self._start:.0f}s -"
                      f"{_format_time(per_step, self.unit_name)}{self._metrics_text(False)}")
        self._last_update = now

    def add(self, n, values=None):
        """`update(steps so far + n, values)`."""
        self.update(self._seen_so_far + n, values)
