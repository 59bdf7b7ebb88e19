"""The `tf.train.Example` protocol buffers (`Example`, `Features`, `Feature`, `BytesList`,
`FloatList`, `Int64List`, `SequenceExample`, `FeatureList`, `FeatureLists`).

Owns: their descriptor, written here in Python as a `FileDescriptorProto` with TensorFlow's
package (`tensorflow`), message names and field numbers (tensorflow/core/example/example.proto
and feature.proto, proto3: repeated numbers are packed), the `TensorProto` and
`TensorShapeProto` of tensorflow/core/framework (for serialize_tensor), and the message classes built from it
by the `protobuf` library in a private descriptor pool (so it never clashes with TensorFlow's own
classes when both are imported). Serialized messages are byte for byte TensorFlow's.
Invariant: without `protobuf` installed, asking for a class raises an ImportError that names
the `records` extra; importing trainlib never needs it.
"""
import functools

__all__ = ["MESSAGE_NAMES", "message_class", "messages"]

INSTALL = "pip install protobuf (or trainlib[records])"

MESSAGE_NAMES = ("BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList",
                 "FeatureLists", "Example", "SequenceExample")
TENSOR_NAMES = ("TensorShapeProto", "TensorProto")  # tensor.proto/tensor_shape.proto, for
# tl.io.serialize_tensor / parse_tensor (dtype kept as its DataType number)

# DataType numbers of tensorflow/core/framework/types.proto, by trainlib dtype name
DATA_TYPES = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6,
              "string": 7, "complex64": 8, "int64": 9, "bool": 10, "bfloat16": 14, "uint16": 17,
              "complex128": 18, "float16": 19, "uint32": 22, "uint64": 23}


def _file_descriptor(descriptor_pb2):
    F = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(
        name="trainlib/tensorflow/core/example/example.proto", package="tensorflow",
        syntax="proto3")

    def message(name, *fields, nested=(), oneofs=()):
        m = proto.message_type.add(name=name)
        for o in oneofs:
            m.oneof_decl.add(name=o)
        for n in nested:
            m.nested_type.add().CopyFrom(n)
        for fname, number, ftype, label, type_name, oneof in fields:
            f = m.field.add(name=fname, number=number, type=ftype, label=label)
            if type_name:
                f.type_name = type_name
            if oneof is not None:
                f.oneof_index = oneof
        return m

    def map_entry(name, value_type):
        entry = descriptor_pb2.DescriptorProto(name=name)
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
        entry.field.add(name="value", number=2, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                        type_name=value_type)
        return entry

    rep, opt = F.LABEL_REPEATED, F.LABEL_OPTIONAL
    message("BytesList", ("value", 1, F.TYPE_BYTES, rep, None, None))
    message("FloatList", ("value", 1, F.TYPE_FLOAT, rep, None, None))
    message("Int64List", ("value", 1, F.TYPE_INT64, rep, None, None))
    message("Feature",
            ("bytes_list", 1, F.TYPE_MESSAGE, opt, ".tensorflow.BytesList", 0),
            ("float_list", 2, F.TYPE_MESSAGE, opt, ".tensorflow.FloatList", 0),
            ("int64_list", 3, F.TYPE_MESSAGE, opt, ".tensorflow.Int64List", 0),
            oneofs=("kind",))
    message("Features",
            ("feature", 1, F.TYPE_MESSAGE, rep, ".tensorflow.Features.FeatureEntry", None),
            nested=(map_entry("FeatureEntry", ".tensorflow.Feature"),))
    message("FeatureList", ("feature", 1, F.TYPE_MESSAGE, rep, ".tensorflow.Feature", None))
    message("FeatureLists",
            ("feature_list", 1, F.TYPE_MESSAGE, rep,
             ".tensorflow.FeatureLists.FeatureListEntry", None),
            nested=(map_entry("FeatureListEntry", ".tensorflow.FeatureList"),))
    dim = descriptor_pb2.DescriptorProto(name="Dim")
    dim.field.add(name="size", number=1, type=F.TYPE_INT64, label=opt)
    dim.field.add(name="name", number=2, type=F.TYPE_STRING, label=opt)
    message("TensorShapeProto",
            ("dim", 2, F.TYPE_MESSAGE, rep, ".tensorflow.TensorShapeProto.Dim", None),
            ("unknown_rank", 3, F.TYPE_BOOL, opt, None, None), nested=(dim,))
    message("TensorProto",
            ("dtype", 1, F.TYPE_INT32, opt, None, None),  # an enum on the wire is a varint too
            ("tensor_shape", 2, F.TYPE_MESSAGE, opt, ".tensorflow.TensorShapeProto", None),
            ("version_number", 3, F.TYPE_INT32, opt, None, None),
            ("tensor_content", 4, F.TYPE_BYTES, opt, None, None),
            # the repeated value fields, one per element kind: (name, number, type)
            *((name, number, kind, rep, None, None) for name, number, kind in (
                ("float_val", 5, F.TYPE_FLOAT), ("double_val", 6, F.TYPE_DOUBLE),
                ("int_val", 7, F.TYPE_INT32), ("string_val", 8, F.TYPE_BYTES),
                ("scomplex_val", 9, F.TYPE_FLOAT), ("int64_val", 10, F.TYPE_INT64),
                ("bool_val", 11, F.TYPE_BOOL), ("dcomplex_val", 12, F.TYPE_DOUBLE),
                ("half_val", 13, F.TYPE_INT32), ("uint32_val", 16, F.TYPE_UINT32),
                ("uint64_val", 17, F.TYPE_UINT64))))
    message("Example", ("features", 1, F.TYPE_MESSAGE, opt, ".tensorflow.Features", None))
    message("SequenceExample",
            ("context", 1, F.TYPE_MESSAGE, opt, ".tensorflow.Features", None),
            ("feature_lists", 2, F.TYPE_MESSAGE, opt, ".tensorflow.FeatureLists", None))
    return proto


@functools.lru_cache(maxsize=None)
def messages():
    """name -> message class, built once from the descriptor above.

    Raises:
        ImportError: if the protobuf package is not installed (naming the `records` extra).
    """
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # noqa: PLC0415
    except ImportError as e:
        raise ImportError("tl.train.Example and the TFRecord parsing ops need the protobuf "
                          f"package, which is not installed: {INSTALL}") from e
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_file_descriptor(descriptor_pb2))
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"tensorflow.{name}"))
            for name in MESSAGE_NAMES + TENSOR_NAMES}


def message_class(name):
    """The message class `name` (one of MESSAGE_NAMES or TENSOR_NAMES), e.g. `message_class("Example")`."""
    return messages()[name]
