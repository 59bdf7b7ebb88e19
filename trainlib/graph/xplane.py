"""The profiler's events as an XSpace: the `<host>.xplane.pb` TensorBoard's profile plugin reads.

Owns: encoding the profiler's events (graph/profiler.py) in the protobuf wire format of
TensorFlow's `tsl/profiler/protobuf/xplane.proto`, by hand (a few messages, so no protobuf
dependency): one XPlane "/host:CPU", an XLine per thread, an XEvent per event with the
site's type, line, layer and function (or a Trace's arguments) as XStats.
Invariants: field numbers are xplane.proto's; metadata ids start at 1 (0 means none);
times are absolute (a line's `timestamp_ns` is the wall clock, offsets in picoseconds).
"""
import threading

__all__ = ["encode_xspace"]

# field numbers of xplane.proto
_SPACE_PLANES, _SPACE_HOSTNAMES = 1, 4
_PLANE_ID, _PLANE_NAME, _PLANE_LINES, _PLANE_EVENT_METADATA, _PLANE_STAT_METADATA = 1, 2, 3, 4, 5
_LINE_ID, _LINE_NAME, _LINE_TIMESTAMP_NS, _LINE_EVENTS, _LINE_DISPLAY_ID = 1, 2, 3, 4, 10
_EVENT_METADATA_ID, _EVENT_OFFSET_PS, _EVENT_DURATION_PS, _EVENT_STATS = 1, 2, 3, 4
_STAT_METADATA_ID, _STAT_INT64, _STAT_STR = 1, 4, 5
_META_ID, _META_NAME, _META_DISPLAY_NAME = 1, 2, 4
_MAP_KEY, _MAP_VALUE = 1, 2


def _varint(n):
    out = bytearray()
    n &= (1 << 64) - 1   # negative int64 values as protobuf writes them (ten bytes)
    while True:
        low, n = n & 0x7F, n >> 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _int(number, value):
    return _varint(number << 3) + _varint(int(value))


def _bytes(number, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return _varint((number << 3) | 2) + _varint(len(data)) + data


class _Ids:
    """Metadata ids (from 1) for names, and the map entries that declare them."""

    def __init__(self):
        self.ids = {}
        self.entries = []

    def __call__(self, key, name, display_name=None):
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.ids) + 1
            value = _int(_META_ID, found) + _bytes(_META_NAME, name)
            if display_name:
                value += _bytes(_META_DISPLAY_NAME, display_name)
            self.entries.append(_int(_MAP_KEY, found) + _bytes(_MAP_VALUE, value))
        return found


def _stats(site, stat_ids):
    if site.kind == "trace":
        items = (site.args or {}).items()
    else:
        items = (("type", site.type), ("line", site.line), ("layer", site.layer),
                 ("function", site.function if site.kind != "function" else None))
    out = b""
    for name, value in items:
        if value is None:
            continue
        stat = _int(_STAT_METADATA_ID, stat_ids(name, name))
        if isinstance(value, int) and not isinstance(value, bool):
            stat += _int(_STAT_INT64, value)
        else:
            stat += _bytes(_STAT_STR, str(value))
        out += _bytes(_EVENT_STATS, stat)
    return out


def encode_xspace(events, begin, begin_wall_ns, host):
    """The bytes of an XSpace holding `events` ((site, start, end, thread), clock ns);
    `begin` (clock ns) is the wall-clock time `begin_wall_ns`."""
    event_ids, stat_ids = _Ids(), _Ids()
    by_thread = {}
    for site, t0, t1, tid in sorted(events, key=lambda e: (e[1], -e[2])):
        by_thread.setdefault(tid, []).append((site, t0, t1))
    lines = b""
    for number, (tid, timed) in enumerate(by_thread.items(), 1):
        line_start = timed[0][1]
        body = b""
        for site, t0, t1 in timed:
            key = (site.kind, site.name, site.type)
            # "name:Type", as TensorFlow names its ops' host events (the op statistics read it)
            name = site.name if site.kind in ("trace", "function") else f"{site.name}:{site.type}"
            event = (_int(_EVENT_METADATA_ID, event_ids(key, name))
                     + _int(_EVENT_OFFSET_PS, (t0 - line_start) * 1000)
                     + _int(_EVENT_DURATION_PS, (t1 - t0) * 1000)
                     + _stats(site, stat_ids))
            body += _bytes(_LINE_EVENTS, event)
        name = "main" if tid == threading.main_thread().ident else f"thread {tid}"
        lines += _bytes(_PLANE_LINES, _int(_LINE_ID, number) + _int(_LINE_DISPLAY_ID, number)
                        + _bytes(_LINE_NAME, name)
                        + _int(_LINE_TIMESTAMP_NS, begin_wall_ns + line_start - begin) + body)
    plane = (_int(_PLANE_ID, 1) + _bytes(_PLANE_NAME, "/host:CPU") + lines
             + b"".join(_bytes(_PLANE_EVENT_METADATA, e) for e in event_ids.entries)
             + b"".join(_bytes(_PLANE_STAT_METADATA, e) for e in stat_ids.entries))
    return _bytes(_SPACE_PLANES, plane) + _bytes(_SPACE_HOSTNAMES, host)
