"""The profiler's events as an XSpace: the `<host>.xplane.pb` TensorBoard's profile plugin reads.

Owns: the descriptor of TensorFlow's `tsl/profiler/protobuf/xplane.proto` (package
`tensorflow.profiler`, proto3; XSpace, XPlane, XLine, XEvent, XStat, XEventMetadata,
XStatMetadata with xplane.proto's field names, numbers and types), written here in Python as
a `FileDescriptorProto`, the message classes the `protobuf` library builds from it in a
private descriptor pool (no clash with TensorFlow's own classes), and filling them with the
profiler's events (graph/profiler.py): one XPlane "/host:CPU", an XLine per thread, an XEvent
per event with the site's type, line, layer and function (or a Trace's arguments) as XStats.
Invariants: metadata ids start at 1 (0 means none); times are absolute (a line's
`timestamp_ns` is the wall clock, offsets in picoseconds); without `protobuf` installed
there are no classes and no XSpace (`encode_xspace` returns None, the profiler skips the
file); importing trainlib never needs it.
"""
import functools
import threading

__all__ = ["encode_xspace", "messages"]

# xplane.proto, message by message: (field name, number, type, how), where type is a scalar
# type's name or a message's, and how is "repeated", "map" (map<int64, type>), a oneof's
# name, or None (a plain proto3 field)
_XPLANE_PROTO = {
    "XSpace": (("planes", 1, "XPlane", "repeated"), ("errors", 2, "string", "repeated"),
               ("warnings", 3, "string", "repeated"), ("hostnames", 4, "string", "repeated")),
    "XPlane": (("id", 1, "int64", None), ("name", 2, "string", None),
               ("lines", 3, "XLine", "repeated"), ("event_metadata", 4, "XEventMetadata", "map"),
               ("stat_metadata", 5, "XStatMetadata", "map"), ("stats", 6, "XStat", "repeated")),
    "XLine": (("id", 1, "int64", None), ("display_id", 10, "int64", None),
              ("name", 2, "string", None), ("display_name", 11, "string", None),
              ("timestamp_ns", 3, "int64", None), ("duration_ps", 9, "int64", None),
              ("events", 4, "XEvent", "repeated")),
    "XEvent": (("metadata_id", 1, "int64", None), ("offset_ps", 2, "int64", "data"),
               ("num_occurrences", 5, "int64", "data"), ("duration_ps", 3, "int64", None),
               ("stats", 4, "XStat", "repeated")),
    "XStat": (("metadata_id", 1, "int64", None), ("double_value", 2, "double", "value"),
              ("uint64_value", 3, "uint64", "value"), ("int64_value", 4, "int64", "value"),
              ("str_value", 5, "string", "value"), ("bytes_value", 6, "bytes", "value"),
              ("ref_value", 7, "uint64", "value")),
    "XEventMetadata": (("id", 1, "int64", None), ("name", 2, "string", None),
                       ("display_name", 4, "string", None), ("metadata", 3, "bytes", None),
                       ("stats", 5, "XStat", "repeated"), ("child_id", 6, "int64", "repeated")),
    "XStatMetadata": (("id", 1, "int64", None), ("name", 2, "string", None),
                      ("description", 3, "string", None)),
}
_PACKAGE = "tensorflow.profiler"


def _file_descriptor(descriptor_pb2):
    F = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(
        name="trainlib/tsl/profiler/protobuf/xplane.proto", package=_PACKAGE, syntax="proto3")

    def typed(field, kind):
        scalar = getattr(F, f"TYPE_{kind.upper()}", None)
        if scalar is None:
            field.type, field.type_name = F.TYPE_MESSAGE, f".{_PACKAGE}.{kind}"
        else:
            field.type = scalar

    for message_name, fields in _XPLANE_PROTO.items():
        message = proto.message_type.add(name=message_name)
        oneofs = []
        for name, number, kind, how in fields:
            field = message.field.add(name=name, number=number, label=F.LABEL_OPTIONAL)
            if how == "map":
                # a map is a repeated nested "<Name>Entry" message (key = 1, value = 2)
                entry = message.nested_type.add(name="".join(
                    part.capitalize() for part in name.split("_")) + "Entry")
                entry.options.map_entry = True
                entry.field.add(name="key", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
                typed(entry.field.add(name="value", number=2, label=F.LABEL_OPTIONAL), kind)
                field.label, field.type = F.LABEL_REPEATED, F.TYPE_MESSAGE
                field.type_name = f".{_PACKAGE}.{message_name}.{entry.name}"
                continue
            typed(field, kind)
            if how == "repeated":
                field.label = F.LABEL_REPEATED
            elif how is not None:
                if how not in oneofs:
                    oneofs.append(how)
                    message.oneof_decl.add(name=how)
                field.oneof_index = oneofs.index(how)
    return proto


@functools.lru_cache(maxsize=None)
def messages():
    """name -> message class of xplane.proto (`messages()["XSpace"]`), built once; None
    when the protobuf package is not installed."""
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # noqa: PLC0415
    except ImportError:
        return None
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_file_descriptor(descriptor_pb2))
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))
            for name in _XPLANE_PROTO}


class _Ids:
    """Metadata ids (from 1) for names, declared in a plane's map (`event_metadata` or
    `stat_metadata`) the first time each is asked for."""

    def __init__(self, declared):
        self.declared = declared
        self.ids = {}

    def __call__(self, key, name, display_name=None):
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.ids) + 1
            metadata = self.declared[found]
            metadata.id, metadata.name = found, name
            if display_name:
                metadata.display_name = display_name
        return found


def _add_stats(event, site, stat_ids):
    if site.kind == "trace":
        items = (site.args or {}).items()
    else:
        items = (("type", site.type), ("line", site.line), ("layer", site.layer),
                 ("function", site.function if site.kind != "function" else None))
    for name, value in items:
        if value is None:
            continue
        stat = event.stats.add(metadata_id=stat_ids(name, name))
        if isinstance(value, int) and not isinstance(value, bool):
            stat.int64_value = value
        else:
            stat.str_value = str(value)


def encode_xspace(events, begin, begin_wall_ns, host):
    """The serialized XSpace holding the profiler's events.

    Args:
        events: (site, start, end, thread id) tuples, times in clock ns.
        begin: the session's start, clock ns.
        begin_wall_ns: the wall-clock time (ns since the epoch) of `begin`.
        host: the host name the XSpace names.

    Returns:
        The bytes of the `<host>.xplane.pb` file, or None when the protobuf package is
        not installed.

    Example:
        >>> data = encode_xspace(events, session.begin, session.begin_wall_ns, "host")
        >>> messages()["XSpace"].FromString(data).planes[0].name
        '/host:CPU'
    """
    classes = messages()
    if classes is None:
        return None
    space = classes["XSpace"](hostnames=[host])
    plane = space.planes.add(id=1, name="/host:CPU")
    event_ids, stat_ids = _Ids(plane.event_metadata), _Ids(plane.stat_metadata)
    by_thread = {}
    for site, t0, t1, tid in sorted(events, key=lambda e: (e[1], -e[2])):
        by_thread.setdefault(tid, []).append((site, t0, t1))
    for number, (tid, timed) in enumerate(by_thread.items(), 1):
        line_start = timed[0][1]
        line = plane.lines.add(
            id=number, display_id=number,
            name="main" if tid == threading.main_thread().ident else f"thread {tid}",
            timestamp_ns=begin_wall_ns + line_start - begin)
        for site, t0, t1 in timed:
            # "name:Type", as TensorFlow names its ops' host events (the op statistics read it)
            name = site.name if site.kind in ("trace", "function") else f"{site.name}:{site.type}"
            event = line.events.add(
                metadata_id=event_ids((site.kind, site.name, site.type), name),
                offset_ps=(t0 - line_start) * 1000, duration_ps=(t1 - t0) * 1000)
            _add_stats(event, site, stat_ids)
    return space.SerializeToString(deterministic=True)
