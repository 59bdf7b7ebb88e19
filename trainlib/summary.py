"""`tl.summary`: TensorBoard logs with tf.summary's API, written through the `tensorboard`
package's own event-file writer (an optional extra: `pip install tensorboard`).

Owns: summary writers (`create_file_writer`, `create_noop_writer`, `as_default`,
`set_as_default`, `flush`, `close`), the default-writer stack and its step, `record_if`,
the default step (`experimental.get_step`/`set_step`), and the summaries themselves —
`scalar`, `histogram`, `text`, `image`, `audio`, `write`, `graph` — encoded as TensorFlow 2
writes them (tensor values with the scalar/histogram/text/image/audio plugin metadata, histograms
bucketed by tensorboard's own algorithm, images as PNG, audio as WAV), and the graph trace
(`trace_on`/`trace_export`/`trace_off`: the graphs of the functions traced while it is on,
written as TensorFlow's `graph_run_metadata_graph` summary), so TensorBoard shows them as it
shows tf.summary's. Invariants: without a default writer a summary returns False and writes
nothing; with one but no step anywhere it is a ValueError; inside a `tl.function` a summary
becomes a stateful `numpy_function` op, so it is written on every call at run time with
that call's values (the writer and the record condition are those active while tracing,
as TensorFlow captures them).
"""
import contextlib
import io
import struct
import threading
import time
import warnings
import wave
import zlib

import numpy as np

from .graph import function as _function
from .graph.context import state
from .graph.ops import script_ops
from .graph import dtypes
from .graph.properties import read_only

__all__ = ["create_file_writer", "create_noop_writer", "SummaryWriter", "scalar", "histogram",
           "text", "image", "audio", "write", "graph", "flush", "record_if",
           "should_record_summaries", "trace_on", "trace_export", "trace_off", "experimental"]

_INSTALL = "pip install tensorboard (or trainlib[tensorboard])"


def _tb():
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2  # noqa: PLC0415
        from tensorboard.summary.writer.event_file_writer import EventFileWriter  # noqa: PLC0415
        from tensorboard.util import tensor_util  # noqa: PLC0415
    except ImportError as e:
        raise ImportError(f"tl.summary writes TensorBoard event files with the tensorboard "
                          f"package, which is not installed: {_INSTALL}") from e
    return event_pb2, summary_pb2, EventFileWriter, tensor_util


class _State(threading.local):
    def __init__(self):
        self.writers = []        # the default-writer stack: (writer, step or None)
        self.record = [True]     # record_if stack: bools or callables
        self.step = None         # experimental.set_step


_local = _State()


class SummaryWriter:
    """Writes summaries to one log folder; `create_file_writer` makes it.

    Example:
        >>> writer = tl.summary.create_file_writer("logs/run1")
        >>> with writer.as_default(step=0):
        ...     tl.summary.scalar("loss", 0.5)
    """

    def __init__(self, logdir, max_queue=None, flush_millis=None, filename_suffix=None):
        self._logdir = None if logdir is None else str(logdir)
        self._options = dict(max_queue_size=10 if max_queue is None else int(max_queue),
                             flush_secs=120 if flush_millis is None else flush_millis / 1000,
                             filename_suffix=filename_suffix or ".v2")
        self._writer = None
        self._closed = False
        self._create_lock = threading.Lock()   # threads sharing a writer make one file
        if self._logdir is not None:
            _tb()  # fail now, naming the install

    def _events(self):
        if self._closed:
            raise RuntimeError(f"This SummaryWriter ({self._logdir}) is closed")
        if self._writer is None:
            with self._create_lock:
                if self._writer is None:
                    self._writer = _tb()[2](self._logdir, **self._options)
        return self._writer

    def _add(self, step, **fields):
        if self._logdir is None:
            return False
        event_pb2 = _tb()[0]
        self._events().add_event(event_pb2.Event(wall_time=time.time(), step=int(step),
                                                 **fields))
        return True

    def init(self):
        """Creates the event file now (it is otherwise created at the first summary)."""
        if self._logdir is not None:
            self._events()

    @contextlib.contextmanager
    def as_default(self, step=None):
        """Makes this the default writer inside the `with` block (`step`: the default step of
        the summaries written there)."""
        _local.writers.append((self, step))
        try:
            yield self
        finally:
            _local.writers.pop()
            self.flush()

    def set_as_default(self, step=None):
        """Makes this the default writer from now on (outside any `as_default` block)."""
        _local.writers[:1] = [(self, step)] if not _local.writers else \
            [(self, step)] + _local.writers[1:]

    def flush(self):
        """Writes what is queued to the event file."""
        if self._writer is not None and not self._closed:
            self._writer.flush()

    def close(self):
        """Flushes and closes the event file; the writer writes nothing afterwards."""
        if self._writer is not None and not self._closed:
            self._writer.close()
        self._closed = True

    logdir = read_only("_logdir", "The folder the events go to (None for a no-op writer).")


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None,
                       name=None):
    """A SummaryWriter writing an event file in `logdir` (created when needed)."""
    return SummaryWriter(logdir, max_queue, flush_millis, filename_suffix)


def create_noop_writer():
    """A SummaryWriter that writes nothing."""
    return SummaryWriter(None)


@contextlib.contextmanager
def record_if(condition):
    """Summaries inside the block are written only when `condition` (a bool, a boolean tensor
    or a function returning one, called at each summary) holds."""
    _local.record.append(condition)
    try:
        yield
    finally:
        _local.record.pop()


def should_record_summaries():
    """Whether a summary written now would be recorded (a default writer and record_if)."""
    if not _local.writers or _local.writers[-1][0]._logdir is None:
        return False
    condition = _local.record[-1]
    return bool(condition() if callable(condition) else condition)


def flush(writer=None, name=None):
    """Flushes `writer` (default: the default writer)."""
    writer = writer or (_local.writers[-1][0] if _local.writers else None)
    if writer is not None:
        writer.flush()


class experimental:  # noqa: N801 -- tf.summary.experimental is a namespace
    """`tl.summary.experimental`: the default step."""

    @staticmethod
    def get_step():
        """The default step set by `set_step` (None if none)."""
        return _local.step

    @staticmethod
    def set_step(step):
        """Sets the step used by summaries that pass none and have no `as_default(step)`."""
        _local.step = step


def _as_numpy(value):
    if hasattr(value, "numpy"):
        return np.asarray(value.numpy())
    return np.asarray(value)


def _resolve_step(step, default):
    for candidate in (step, default, _local.step):
        if candidate is not None:
            return int(_as_numpy(candidate))
    raise ValueError("No step set. Please specify one either through the `step` argument or "
                     "through tl.summary.experimental.set_step()")


def _emit(name, data, step, encode):
    """Writes one summary now, or adds the op that writes it at run time inside a graph."""
    if not _local.writers:
        return False
    writer, default_step = _local.writers[-1]
    condition = _local.record[-1]
    if writer._logdir is None:
        return False
    if state.graph is not None:  # traced: write at run time with that call's values
        if isinstance(condition, bool) and not condition:
            return False
        step_value = next((s for s in (step, default_step, _local.step) if s is not None), None)
        if step_value is None:
            _resolve_step(None, None)  # the error, at trace time
        tensor_condition = [] if callable(condition) or isinstance(condition, bool) \
            else [condition]

        def run(values, step_array, *cond):
            keep = condition() if callable(condition) else bool(cond[0]) if cond else True
            if keep:
                writer._add(int(step_array), summary=encode(values))
            return np.asarray(bool(keep))
        return script_ops.numpy_function(run, [data, step_value] + tensor_condition, dtypes.bool)
    if not (condition() if callable(condition) else bool(_as_numpy(condition))):
        return False
    return writer._add(_resolve_step(step, default_step), summary=encode(_as_numpy(data)))


def _tensor_summary(name, array, plugin_metadata):
    _, summary_pb2, _, tensor_util = _tb()
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(
        tag=name, metadata=plugin_metadata, tensor=tensor_util.make_tensor_proto(array))])


def scalar(name, data, step=None, description=None):
    """Writes a scalar (a float32 value, as tf.summary.scalar) under `name` at `step`.

    Returns:
        True if written, False if there is no default writer or record_if says no (a
        boolean tensor inside a tl.function).
    """
    def encode(values):
        from tensorboard.plugins.scalar import metadata  # noqa: PLC0415
        array = np.asarray(values, np.float32)
        if array.ndim:
            raise ValueError(f"tl.summary.scalar {name!r}: expected a scalar, got shape "
                             f"{array.shape}")
        return _tensor_summary(name, array, metadata.create_summary_metadata(
            display_name=None, description=description or ""))
    return _emit(name, data, step, encode)


def histogram(name, data, step=None, buckets=None, description=None):
    """Writes the distribution of `data`'s values as `buckets` (30) equal-width buckets of
    [left edge, right edge, count], as tf.summary.histogram."""
    def encode(values):
        from tensorboard.plugins.histogram import summary_v2  # noqa: PLC0415
        return summary_v2.histogram_pb(name, np.asarray(values, np.float64).ravel(),
                                       buckets=buckets, description=description)
    return _emit(name, data, step, encode)


def text(name, data, step=None, description=None):
    """Writes a string (or a tensor of strings) as a text summary (Markdown in TensorBoard)."""
    def encode(values):
        from tensorboard.plugins.text import summary_v2  # noqa: PLC0415
        array = np.asarray(values)
        if array.dtype.kind == "O":
            array = np.vectorize(lambda s: s if isinstance(s, bytes) else str(s).encode(),
                                 otypes=[object])(array)
        return summary_v2.text_pb(name, array.astype(bytes) if array.dtype.kind == "U" else
                                  array, description=description)
    return _emit(name, data, step, encode)


def _png(pixels):
    """PNG bytes of a uint8 [height, width, channels] array (1 grey, 2 grey+alpha, 3 RGB,
    4 RGBA), written with zlib alone."""
    height, width, channels = pixels.shape
    color = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    rows = b"".join(b"\x00" + pixels[y].tobytes() for y in range(height))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + \
            struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) \
        + chunk(b"IEND", b"")


def image(name, data, step=None, max_outputs=3, description=None):
    """Writes up to `max_outputs` images of `data` ([k, height, width, channels], channels
    1, 2, 3 or 4; floats in [0, 1] become x * 255.5 truncated into 0..255, as
    tf.summary.image's convert_image_dtype) as PNGs."""
    def encode(values):
        from tensorboard.plugins.image import metadata  # noqa: PLC0415
        array = np.asarray(values)
        if array.ndim != 4 or array.shape[-1] not in (1, 2, 3, 4):
            raise ValueError(f"tl.summary.image {name!r}: expected [k, height, width, channels]"
                             f" with 1-4 channels, got shape {array.shape}")
        if array.dtype.kind == "f":
            array = np.clip(array.astype(np.float64) * 255.5, 0, 255)  # convert_image_dtype
        array = array.astype(np.uint8)[:max_outputs]
        encoded = [str(array.shape[2]).encode(), str(array.shape[1]).encode()]
        encoded += [_png(one) for one in array]
        return _tensor_summary(name, np.array(encoded, dtype=object),
                               metadata.create_summary_metadata(
                                   display_name=None, description=description or ""))
    return _emit(name, data, step, encode)


def write(tag, tensor, step=None, metadata=None, name=None):
    """Writes `tensor` under `tag` with `metadata` (a SummaryMetadata, or bytes of one, or
    None), as tf.summary.write."""
    def encode(values):
        summary_pb2 = _tb()[1]
        meta = metadata
        if isinstance(meta, bytes):
            meta = summary_pb2.SummaryMetadata.FromString(meta)
        return _tensor_summary(tag, np.asarray(values), meta or summary_pb2.SummaryMetadata())
    return _emit(tag, tensor, step, encode)


def plugin_metadata(plugin_name, content=b""):
    """A SummaryMetadata naming the TensorBoard plugin that shows a `write` summary."""
    meta = _tb()[1].SummaryMetadata()
    meta.plugin_data.plugin_name = plugin_name
    meta.plugin_data.content = content
    return meta


def _graph_def_bytes(graph_data):
    from tensorboard.compat.proto import graph_pb2  # noqa: PLC0415
    source = graph_data
    if hasattr(source, "_concrete_functions"):  # a Function: its latest trace
        concretes = source._concrete_functions()
        if not concretes:
            raise ValueError("tl.summary.graph: the Function has not been traced yet")
        source = concretes[-1]
    if not hasattr(source, "as_graph_def"):  # a ConcreteFunction
        source = source.graph
    graph_def = graph_pb2.GraphDef()
    for node in source.as_graph_def().node:
        graph_def.node.add(name=node.name, op=node.op, input=list(node.input),
                           device=node.device or "")
    return graph_def.SerializeToString()


def graph(graph_data):
    """Writes a graph (a Graph, ConcreteFunction or traced Function) for TensorBoard's graph
    dashboard, at step 0. Returns False without a default writer."""
    if not _local.writers or not should_record_summaries():
        return False
    return _local.writers[-1][0]._add(0, graph_def=_graph_def_bytes(graph_data))


def audio(name, data, sample_rate, step=None, max_outputs=3, encoding=None, description=None):
    """Writes up to `max_outputs` clips of `data` ([k, samples, channels] floats in [-1, 1])
    as 16-bit WAV files at `sample_rate` Hz, as tf.summary.audio.

    Raises:
        ValueError: for data that is not [k, samples, channels], or an encoding other than
            "wav".
    """
    if encoding not in (None, "wav"):
        raise ValueError(f"tl.summary.audio {name!r}: unknown encoding {encoding!r} (only 'wav')")

    def encode(values):
        from tensorboard.plugins.audio import metadata  # noqa: PLC0415
        array = np.asarray(values, np.float32)
        if array.ndim != 3:
            raise ValueError(f"tl.summary.audio {name!r}: expected [k, samples, channels], got "
                             f"shape {array.shape}")
        rate = int(_as_numpy(sample_rate))
        clips = []
        for clip in array[:max_outputs]:
            # as TensorFlow's EncodeWav: scale by 2**15, round, saturate to int16
            pcm = np.clip(np.round(clip.astype(np.float64) * 32768.0), -32768, 32767).astype("<i2")
            buffer = io.BytesIO()
            with wave.open(buffer, "wb") as wav:
                wav.setnchannels(clip.shape[1])
                wav.setsampwidth(2)
                wav.setframerate(rate)
                wav.writeframes(pcm.tobytes())
            clips.append([buffer.getvalue(), b""])      # [encoded clip, label]
        meta = metadata.create_summary_metadata(display_name=None, description=description or "",
                                                encoding=metadata.Encoding.Value("WAV"))
        return _tensor_summary(name, np.array(clips, dtype=object).reshape(len(clips), 2), meta)
    return _emit(name, data, step, encode)


class _Trace:
    """The graph trace `trace_on` started: the ConcreteFunctions traced since."""

    lock = threading.Lock()
    graphs = None          # a list while a trace is on


def _collect(concrete):
    with _Trace.lock:
        if _Trace.graphs is not None:
            _Trace.graphs.append(concrete)


def trace_on(graph=True, profiler=False, profiler_outdir=None):
    """Starts collecting the graphs of the `tl.function`s traced from now on (the first call
    of a function, or a new input signature), for `trace_export`.

    trainlib compiles each graph once, so a function already traced before `trace_on` adds
    nothing: start the trace before the first call, as TensorFlow's examples do. There is no
    profiler: `profiler=True` warns and collects graphs only.
    """
    if state.graph is not None:
        warnings.warn("Cannot enable trace inside a tl.function.", stacklevel=2)
        return
    if profiler:
        warnings.warn("tl.summary.trace_on(profiler=True): trainlib has no profiler; only the "
                      "graphs are collected", stacklevel=2)
    with _Trace.lock:
        if _Trace.graphs is not None:
            warnings.warn("Trace already enabled", stacklevel=2)
            return
        _Trace.graphs = []
        _function.TRACE_LISTENERS.append(_collect)


def trace_off():
    """Stops the trace and discards what it collected."""
    with _Trace.lock:
        _Trace.graphs = None
        if _collect in _function.TRACE_LISTENERS:
            _function.TRACE_LISTENERS.remove(_collect)


def trace_export(name, step=None, profiler_outdir=None):
    """Writes the graphs the trace collected to the default writer under `name` (TensorFlow's
    `graph_run_metadata_graph` summary, which TensorBoard's graph dashboard shows), then stops
    the trace.

    Raises:
        ValueError: if no trace is on, or a default writer exists but no step was given.
    """
    if state.graph is not None:
        warnings.warn("Cannot export trace inside a tl.function.", stacklevel=2)
        return None
    with _Trace.lock:
        collected = _Trace.graphs
    if collected is None:
        raise ValueError("Must enable trace before export through tl.summary.trace_on.")
    try:
        from tensorboard.compat.proto import config_pb2, graph_pb2  # noqa: PLC0415
        run_metadata = config_pb2.RunMetadata()
        for concrete in collected:
            graph_def = graph_pb2.GraphDef.FromString(_graph_def_bytes(concrete))
            function_graph = run_metadata.function_graphs.add()
            function_graph.pre_optimization_graph.CopyFrom(graph_def)
            function_graph.post_optimization_graph.CopyFrom(graph_def)

        def encode(values):
            return _tensor_summary(name, np.array(values, dtype=object),
                                   plugin_metadata("graph_run_metadata_graph", b"1"))
        return _emit(name, np.array(run_metadata.SerializeToString(), dtype=object), step, encode)
    finally:
        trace_off()
