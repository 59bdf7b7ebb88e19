"""The profiler: where a step's time goes, by op, op type and the user's source line.

Owns: the profiling session (`start` / `stop`, one per process, as TensorFlow's), the
events it records, the trace it writes and the text summary. While a session runs:
  - every tl.function runs a separately compiled Program whose generated code reads the
    clock around each op's block and around the whole call (`exec/program.py` PROFILING,
    `exec/lower.py` `lower_timed`); the default Programs are never changed, so profiling
    off costs nothing;
  - eager ops are timed one by one (`op._run_eagerly` is rebound for the session);
  - `Trace(name, **kwargs)` blocks are events of their own (Keras's "Profiled batch").
Each event names a site: an op of a generated function (its name, type, the user's line
that made it: `Operation.origin`, else `Operation.location`), a whole function call, an
eager op, or a Trace. `stop()` writes `<logdir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/`:
`<host>.trace.json.gz` (Chrome Trace Event JSON, which Perfetto and chrome://tracing
open), `<host>.xplane.pb` (the same events as TensorFlow's XSpace, `xplane.py`: what
TensorBoard's profile plugin reads; skipped when the protobuf package is not installed)
and `summary.txt`.
Invariants: events of one thread nest (an op inside its call, a call inside a Trace);
a summary's self times add up to the time recorded (no block counted twice).
"""
import datetime
import gzip
import json
import linecache
import os
import socket
import threading
import time

from . import op as _op
from .context import state
from .errors import AlreadyExistsError, UnavailableError, UnimplementedError, user_location
from .exec.program import PROFILING
from .xplane import encode_xspace

__all__ = ["ProfilerOptions", "Profile", "Trace", "start", "stop", "summary"]

_clock = time.perf_counter_ns


class Site:
    """What one kind of event times: `kind` "op" (an op of a generated function), "function"
    (a whole tl.function call), "eager" (an op run eagerly) or "trace" (a `Trace` block);
    `line` is the user's `file.py:LINE` it is attributed to and `layer` the built-in layer
    that made it (or None)."""

    __slots__ = ("kind", "name", "type", "function", "line", "layer", "args")

    def __init__(self, kind, name, type_, function=None, line=None, layer=None, args=None):
        self.kind, self.name, self.type, self.function = kind, name, type_, function
        self.line, self.layer, self.args = line, layer, args


def _attribution(location, origin):
    """(line, layer) an op is attributed to: its origin's when it has one."""
    if origin is not None and origin[0]:
        return origin[0], origin[1]
    return location, None


class _Hooks:
    """What profiled generated code calls: `clock()`, `thread()` and `record(event)`, which
    appends an event (site number, start, end, thread) to `events`: a tuple of ints, which
    the garbage collector stops tracking at its first pass, so a long profile gives it
    nothing to scan; `sites` holds what the numbers name. The sites of a Program's ops are made
    once, when it is compiled. One instance (`HOOKS`), so a function's profiled Program is
    compiled once per process, not once per session; a session takes the events recorded
    between its start and stop."""

    clock = staticmethod(_clock)
    thread = staticmethod(threading.get_ident)

    def __init__(self):
        self.events = []
        self.record = self.events.append
        self.sites = []
        self._lock = threading.Lock()

    def number(self, site):
        """The number events record for `site`."""
        with self._lock:
            self.sites.append(site)
            return len(self.sites) - 1

    def site(self, op, function):
        line, layer = _attribution(op.location, op.origin)
        return self.number(Site("op", op.name, op.type, function, line, layer))

    def function_site(self, function):
        return self.number(Site("function", function, "Function", function))

    def take(self):
        """The events recorded so far as (Site, start, end, thread) tuples; the hooks then
        forget them."""
        events = self.events[:]
        del self.events[:len(events)]
        sites = self.sites
        return [(sites[k], start, end, thread) for k, start, end, thread in events]


HOOKS = _Hooks()


class ProfilerOptions:
    """Options of a profile, as `tf.profiler.experimental.ProfilerOptions`.

    Accepted for TensorFlow programs; trainlib records its host ops at one level, so
    `host_tracer_level`, `python_tracer_level` and `device_tracer_level` change nothing,
    and `delay_ms` (a delay before recording starts) is honoured.

    Example:
        >>> tl.profiler.experimental.start("logs", tl.profiler.experimental.ProfilerOptions())
    """

    def __init__(self, host_tracer_level=2, python_tracer_level=0, device_tracer_level=1,
                 delay_ms=None):
        self.host_tracer_level, self.python_tracer_level = host_tracer_level, python_tracer_level
        self.device_tracer_level, self.delay_ms = device_tracer_level, delay_ms

    def __repr__(self):
        return (f"ProfilerOptions(host_tracer_level={self.host_tracer_level}, "
                f"python_tracer_level={self.python_tracer_level}, "
                f"device_tracer_level={self.device_tracer_level}, delay_ms={self.delay_ms})")


class _Session:
    def __init__(self, logdir, options):
        self.logdir, self.options = logdir, options or ProfilerOptions()
        delay = int(self.options.delay_ms or 0) * 1_000_000
        self.begin = _clock() + delay
        self.wall = time.time()
        self.begin_wall_ns = time.time_ns() + delay   # the wall clock at `begin`


_session = None
_last_summary = None
_EAGER_SITES = {}   # (op type, location, origin) -> site number
_lock = threading.Lock()
_plain_run_eagerly = _op._run_eagerly


def _profiled_run_eagerly(opdef, inputs, attrs, xp):
    """`op._run_eagerly` while a session runs: the eager op, timed, attributed to the
    user's line (or the built-in layer being called)."""
    start = _clock()
    out = _plain_run_eagerly(opdef, inputs, attrs, xp)
    end = _clock()
    session = _session
    if session is not None:
        origins = state.origins
        location = user_location()
        key = (opdef.name, location, origins[-1] if origins else None)
        site = _EAGER_SITES.get(key)
        if site is None:
            line, layer = _attribution(location, key[2])
            site = _EAGER_SITES[key] = HOOKS.number(Site("eager", opdef.name, opdef.name, None,
                                                         line, layer))
        HOOKS.record((site, start, end, threading.get_ident()))
    return out


def start(logdir, options=None):
    """Starts profiling: every tl.function call, op and `Trace` block from now until `stop()`.

    Args:
        logdir: where `stop()` writes the profile (`<logdir>/plugins/profile/<run>/`).
        options: a `ProfilerOptions` (its `delay_ms` delays recording).

    Raises:
        tl.errors.AlreadyExistsError: a profile is already running.

    Example:
        >>> tl.profiler.experimental.start("logs")
        >>> model.fit(x, y, epochs=1)
        >>> tl.profiler.experimental.stop()
    """
    global _session
    with _lock:
        if _session is not None:
            raise AlreadyExistsError("Another profiler is running.")
        HOOKS.take()   # what profiled code recorded after the last stop (a kept Program)
        _session = _Session(str(logdir), options)
        PROFILING.switch(HOOKS)
        _op._run_eagerly = _profiled_run_eagerly


def stop(save=True):
    """Stops profiling; with `save`, writes the trace and `summary.txt` (see `summary()`).

    Raises:
        tl.errors.UnavailableError: no profile is running (as TensorFlow's).

    Example:
        >>> tl.profiler.experimental.stop()
        >>> print(tl.profiler.experimental.summary())
    """
    global _session, _last_summary
    with _lock:
        session = _session
        if session is None:
            raise UnavailableError("Cannot export profiling results. No profiler is running.")
        _op._run_eagerly = _plain_run_eagerly
        PROFILING.switch(None)
        _session = None
        events = HOOKS.take()
    if not save:
        return
    events = [e for e in events if e[1] >= session.begin]
    text = summary_text(events)
    _last_summary = text
    run_dir = _run_dir(session.logdir, session.wall)
    host = socket.gethostname()
    with gzip.open(os.path.join(run_dir, f"{host}.trace.json.gz"), "wt", encoding="utf-8") as f:
        json.dump(trace_json(events, session.begin), f)
    xspace = encode_xspace(events, session.begin, session.begin_wall_ns, host)
    if xspace is not None:   # None: protobuf is not installed, so no XSpace
        with open(os.path.join(run_dir, f"{host}.xplane.pb"), "wb") as f:
            f.write(xspace)
    with open(os.path.join(run_dir, "summary.txt"), "w", encoding="utf-8") as f:
        f.write(text)


def _run_dir(logdir, wall):
    """A new `<logdir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>` (suffixed when it exists)."""
    stamp = datetime.datetime.fromtimestamp(wall).strftime("%Y_%m_%d_%H_%M_%S")
    base = os.path.join(logdir, "plugins", "profile", stamp)
    path, n = base, 1
    while os.path.exists(path):
        path, n = f"{base}_{n}", n + 1
    os.makedirs(path)
    return path


def summary(logdir=None):
    """The text summary of a profile: time per op type, per op and per line of the user's
    source (self time: a block's time less the blocks recorded inside it).

    Args:
        logdir: read the newest profile under `<logdir>/plugins/profile/`; None: the
            profile this process stopped last.

    Raises:
        ValueError: there is no such profile.

    Example:
        >>> print(tl.profiler.experimental.summary("logs"))
    """
    if logdir is None:
        if _last_summary is None:
            raise ValueError("profiler summary: no profile was saved in this process; call "
                             "tl.profiler.experimental.start(logdir) and stop() first")
        return _last_summary
    root = os.path.join(str(logdir), "plugins", "profile")
    runs = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "summary.txt"))) \
        if os.path.isdir(root) else []
    if not runs:
        raise ValueError(f"profiler summary: no profile under {root!r}; profile with "
                         f"tl.profiler.experimental.start({str(logdir)!r}) first")
    with open(os.path.join(root, runs[-1], "summary.txt"), encoding="utf-8") as f:
        return f.read()


class Trace:
    """A block of the program as one event of the profile (nothing when none runs), as
    `tf.profiler.experimental.Trace`: keyword arguments become its args (`step_num`
    marks a training step).

    Example:
        >>> with tl.profiler.experimental.Trace("train", step_num=step):
        ...     train_step(x, y)
    """

    def __init__(self, name, **kwargs):
        self.name, self.kwargs = name, kwargs
        self._start = None

    def __enter__(self):
        self._start = _clock() if _session is not None else None
        return self

    def __exit__(self, *exc):
        session = _session
        if self._start is not None and session is not None:
            site = HOOKS.number(Site("trace", self.name, "Trace", args=self.kwargs))
            HOOKS.record((site, self._start, _clock(), threading.get_ident()))
        return False


class Profile:
    """`start(logdir, options)` ... `stop()` as a `with` block, as
    `tf.profiler.experimental.Profile`.

    Example:
        >>> with tl.profiler.experimental.Profile("logs"):
        ...     model.fit(x, y)
    """

    def __init__(self, logdir, options=None):
        self.logdir, self.options = logdir, options

    def __enter__(self):
        start(self.logdir, self.options)
        return self

    def __exit__(self, *exc):
        stop()
        return False


def _refused(what):
    def refuse(*args, **kwargs):
        raise UnimplementedError(
            f"tl.profiler.experimental.{what}: trainlib profiles in process only (there is no "
            "profiler server to reach); call tl.profiler.experimental.start(logdir) and "
            "stop() in the program you want to profile")
    refuse.__name__ = what.rsplit(".", 1)[-1]
    refuse.__doc__ = f"Refused: `{what}` needs TensorFlow's profiler server."
    return refuse


client_trace = _refused("client.trace")
client_monitor = _refused("client.monitor")
server_start = _refused("server.start")


# -- the trace (Chrome Trace Event JSON)
def _args(site):
    if site.kind == "trace":
        return {k: v if isinstance(v, (int, float, str, bool)) or v is None else repr(v)
                for k, v in (site.args or {}).items()}
    out = {"type": site.type}
    if site.function is not None and site.kind != "function":
        out["function"] = site.function
    if site.line:
        out["line"] = site.line
    if site.layer:
        out["layer"] = site.layer
    return out


def trace_json(events, begin):
    """The events as Chrome Trace Event JSON (`{"traceEvents": [...]}`), times in µs from
    `begin` (clock ns)."""
    pid = os.getpid()
    threads = {}
    out = [{"name": "process_name", "ph": "M", "pid": pid,
            "args": {"name": f"{socket.gethostname()} (trainlib host)"}}]
    for site, t0, t1, tid in sorted(events, key=lambda e: (e[1], -e[2])):
        if tid not in threads:
            threads[tid] = len(threads) + 1
            out.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": threads[tid],
                        "args": {"name": "main" if tid == threading.main_thread().ident
                                 else f"thread {tid}"}})
        out.append({"name": site.name, "cat": site.kind, "ph": "X", "ts": (t0 - begin) / 1000,
                    "dur": (t1 - t0) / 1000, "pid": pid, "tid": threads[tid],
                    "args": _args(site)})
    return {"traceEvents": out, "displayTimeUnit": "ns"}


# -- the summary
def self_times(events):
    """[(site, total ns, self ns)] for `events`: self time is the time not inside an event
    recorded within it (on the same thread)."""
    out = []
    stacks = {}
    for site, t0, t1, tid in sorted(events, key=lambda e: (e[3], e[1], -e[2])):
        stack = stacks.setdefault(tid, [])
        while stack and stack[-1][0] <= t0:   # (end, entry) of the blocks still open
            stack.pop()
        entry = [site, t1 - t0, t1 - t0]
        if stack:
            stack[-1][1][2] -= t1 - t0   # the enclosing block's self time excludes this one
        stack.append((t1, entry))
        out.append(entry)
    return [tuple(e) for e in out]


def _table(title, rows, total, headers, limit=None):
    """A text table: rows (label, count, ns, extra...) sorted by time, with % of `total`;
    past `limit` rows, one line sums the rest."""
    rows = sorted(rows, key=lambda r: -r[2])
    lines = [title, "  " + "  ".join(headers)]
    for label, count, ns, *extra in rows[:limit]:
        share = 100.0 * ns / total if total else 0.0
        lines.append(f"  {ns / 1e6:10.3f} ms {share:5.1f}% {count:7d}  {label}"
                     + "".join(f"  {e}" for e in extra if e))
    rest = rows[limit:] if limit is not None else []
    if rest:
        ns = sum(r[2] for r in rest)
        lines.append(f"  {ns / 1e6:10.3f} ms {100.0 * ns / total if total else 0.0:5.1f}% "
                     f"{sum(r[1] for r in rest):7d}  ({len(rest)} more)")
    return lines


def _source_text(line):
    path, _, number = (line or "").rpartition(":")
    if not path or not number.isdigit():
        return ""
    return linecache.getline(path, int(number)).strip()[:60].rstrip()


def summary_text(events):
    """The summary of `events`: totals, then time per function, op type, op and user line."""
    timed = self_times(events)
    ops = [(s, total, own) for s, total, own in timed if s.kind in ("op", "eager")]
    op_total = sum(own for _, _, own in ops)
    calls = [(s, total, own) for s, total, own in timed if s.kind == "function"]
    traces = [(s, total) for s, total, _ in timed if s.kind == "trace"]
    lines = ["trainlib profile summary (self time: a block's time less the blocks recorded in it;",
             "an op's time includes one reading of the clock, about 0.1 µs)", ""]
    steps = [total for s, total in traces if "step_num" in (s.args or {})]
    if steps:
        lines.append(f"steps (Trace with step_num): {len(steps)}, mean {sum(steps) / len(steps) / 1e6:.3f} ms")
    lines.append(f"time in ops: {op_total / 1e6:.3f} ms ({len(ops)} op runs, "
                 f"{sum(1 for s, _, _ in ops if s.kind == 'eager')} eager)")
    lines.append("")

    def grouped(items, key, extra=lambda s: (), value=lambda total, own: own):
        table = {}
        for site, total, own in items:
            k = key(site)
            row = table.get(k)
            if row is None:
                row = table[k] = [k, 0, 0, *extra(site)]
            row[1] += 1
            row[2] += value(total, own)
        return list(table.values())

    if calls:
        rows = grouped(calls, lambda s: s.name, value=lambda total, own: total)
        lines += _table("per tl.function call (total time, ops included):", rows,
                        sum(r[2] for r in rows), ["time", "share", "calls", "function"])
        overhead = sum(own for _, _, own in calls)
        lines.append(f"  of which outside its ops (Python glue, buffers, hooks): {overhead / 1e6:.3f} ms")
        lines.append("")
    lines += _table("per op type:", grouped(ops, lambda s: s.type), op_total,
                    ["time", "share", "runs", "op type"], limit=15)
    lines.append("")
    op_rows = grouped(ops, lambda s: f"{s.function or '(eager)'}/{s.name}",
                      lambda s: (f"{s.type} @ {_short(s.line)}",))
    lines += _table("per op:", op_rows, op_total,
                    ["time", "share", "runs", "function/op  type @ line"], limit=15)
    lines.append("")
    line_rows = grouped(ops, lambda s: s.line or "(unknown line)",
                        lambda s: (f"[{s.layer}]" if s.layer else "", _source_text(s.line)))
    lines += _table("per line of your source (forward and gradient ops of the line together):",
                    line_rows, op_total, ["time", "share", "runs", "file:line  [layer]  source"])
    return "\n".join(lines) + "\n"


def _short(line):
    if not line:
        return "?"
    path, _, number = line.rpartition(":")
    return f"{os.path.basename(path)}:{number}"
