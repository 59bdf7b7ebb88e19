"""`tl.profiler`: TensorFlow's `tf.profiler` names (`tl.profiler.experimental.start`...).

Re-exports only; the profiler lives in `graph/profiler.py`.
"""
import types as _types

from .graph.profiler import (Profile, ProfilerOptions, Trace, client_monitor, client_trace,
                             server_start, start, stop, summary)

experimental = _types.SimpleNamespace(
    Profile=Profile, ProfilerOptions=ProfilerOptions, Trace=Trace, start=start, stop=stop,
    summary=summary,
    client=_types.SimpleNamespace(trace=client_trace, monitor=client_monitor),
    server=_types.SimpleNamespace(start=server_start))

__all__ = ["experimental"]
