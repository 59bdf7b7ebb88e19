"""TFRecord files: `tl.io.TFRecordWriter`, `tl.io.TFRecordOptions` and the record reader behind
`tl.data.TFRecordDataset`.

Owns: the TFRecord framing (each record is its length as a little-endian uint64, the masked
CRC32C of those 8 bytes, the data, the masked CRC32C of the data), CRC32C itself (Castagnoli
polynomial, table driven, sliced by 8: no installed library provides it), and the compressed variants
("ZLIB": the whole framed stream through zlib; "GZIP": through gzip), as TensorFlow writes them.
Invariant: a record whose length or data does not match its checksum, or a file that ends in
the middle of a record, raises DataLossError naming the file and the record's offset (in the
uncompressed stream, as TensorFlow counts it).
"""
import os
import stat
import struct
import zlib

from .graph.errors import DataLossError, InvalidArgumentError, NotFoundError

__all__ = ["crc32c", "masked_crc32c", "TFRecordOptions", "TFRecordCompressionType",
           "TFRecordWriter", "compression_of", "read_records"]


def _tables():
    """The CRC32C lookup tables for slicing by 8: table k advances a byte through k more."""
    poly = 0x82F63B78  # Castagnoli, bit-reversed
    first = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        first.append(c)
    tables = [first]
    for _ in range(7):
        tables.append([(c >> 8) ^ first[c & 0xFF] for c in tables[-1]])
    return tuple(tuple(t) for t in tables)


_TABLES = _tables()


def crc32c(data, crc=0):
    """The CRC32C (Castagnoli) checksum of the bytes `data`, continuing from `crc`."""
    t0, t1, t2, t3, t4, t5, t6, t7 = _TABLES
    crc ^= 0xFFFFFFFF
    data = memoryview(data).cast("B")
    whole = len(data) & ~7
    for lo, hi in struct.iter_unpack("<II", data[:whole]):   # eight bytes a step
        lo ^= crc
        crc = (t7[lo & 0xFF] ^ t6[(lo >> 8) & 0xFF] ^ t5[(lo >> 16) & 0xFF] ^ t4[lo >> 24]
               ^ t3[hi & 0xFF] ^ t2[(hi >> 8) & 0xFF] ^ t1[(hi >> 16) & 0xFF] ^ t0[hi >> 24])
    for byte in data[whole:]:
        crc = t0[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """The CRC32C of `data` rotated right by 15 bits plus 0xa282ead8, as TFRecord stores it."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


class TFRecordCompressionType:
    """The compression of a TFRecord file: NONE (0), ZLIB (1) or GZIP (2)."""
    NONE = 0
    ZLIB = 1
    GZIP = 2


_NAMES = {None: "", "": "", "ZLIB": "ZLIB", "GZIP": "GZIP", TFRecordCompressionType.NONE: "",
          TFRecordCompressionType.ZLIB: "ZLIB", TFRecordCompressionType.GZIP: "GZIP"}


def compression_of(value, who):
    """"", "ZLIB" or "GZIP" for a compression type given as a name, a TFRecordCompressionType,
    a TFRecordOptions or None.

    Raises:
        ValueError: for any other value (naming `who`).
    """
    if isinstance(value, TFRecordOptions):
        return value.compression_type_string
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if hasattr(value, "numpy"):
        value = value.numpy()
        value = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    try:
        return _NAMES[value]
    except (KeyError, TypeError):
        raise ValueError(f"{who}: compression_type must be one of '', 'ZLIB', 'GZIP' or None, "
                         f"got {value!r}") from None


class TFRecordOptions:
    """Options of a TFRecordWriter (tf.io.TFRecordOptions): the compression type ("", "ZLIB",
    "GZIP") and the zlib settings TensorFlow accepts (compression_level, window_bits,
    mem_level, compression_strategy are used; the buffer sizes and flush_mode are accepted).

    Example:
        >>> tl.io.TFRecordWriter("data.tfrecord.gz", tl.io.TFRecordOptions("GZIP"))
    """
    compression_type_map = {TFRecordCompressionType.ZLIB: "ZLIB",
                            TFRecordCompressionType.GZIP: "GZIP",
                            TFRecordCompressionType.NONE: ""}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        self.compression_type = compression_of(compression_type, "TFRecordOptions")
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @property
    def compression_type_string(self):
        return self.compression_type

    @classmethod
    def get_compression_type_string(cls, options):
        """"", "ZLIB" or "GZIP" for `options` (a TFRecordOptions, a name, or None)."""
        return compression_of(options, "TFRecordOptions.get_compression_type_string")

    def __repr__(self):
        return f"TFRecordOptions(compression_type={self.compression_type!r})"


def _open(path, mode, op):
    """`open`, with a missing file or folder as NotFoundError naming the op (as TensorFlow);
    a file read must be a regular file (a FIFO would block, a device never end)."""
    try:
        if "r" in mode and not stat.S_ISREG(os.stat(path).st_mode):
            raise InvalidArgumentError(f"{op}: {path} is not a regular file")
        return open(path, mode)
    except FileNotFoundError:
        raise NotFoundError(f"{op}: {path}: No such file or directory", op=op) from None


def _frame(record):
    header = struct.pack("<Q", len(record))
    return b"".join((header, struct.pack("<I", masked_crc32c(header)), record,
                     struct.pack("<I", masked_crc32c(record))))


class TFRecordWriter:
    """Writes records (bytes) to a TFRecord file, as tf.io.TFRecordWriter.

    Args:
        path: the file to write (created or truncated).
        options: a TFRecordOptions, or a compression type name ("", "ZLIB", "GZIP").

    Example:
        >>> with tl.io.TFRecordWriter("data.tfrecord") as writer:
        ...     writer.write(example.SerializeToString())
    """

    def __init__(self, path, options=None):
        self._path = path.decode("utf-8") if isinstance(path, bytes) else str(path)
        options = options if isinstance(options, TFRecordOptions) else TFRecordOptions(
            compression_of(options, "TFRecordWriter"))
        self._kind = options.compression_type
        level = -1 if options.compression_level is None else int(options.compression_level)
        self._file = _open(self._path, "wb", "TFRecordWriter")
        self._zip = None
        if self._kind:
            bits = 15 if options.window_bits is None else int(options.window_bits)
            self._zip = zlib.compressobj(
                level, zlib.DEFLATED, bits + 16 if self._kind == "GZIP" else bits,
                9 if options.mem_level is None else int(options.mem_level),
                0 if options.compression_strategy is None else int(options.compression_strategy))

    def write(self, record):
        """Appends one record (bytes, a str written as UTF-8, or a scalar string tensor)."""
        if self._file is None:
            raise ValueError(f"TFRecordWriter: {self._path} is closed")
        if hasattr(record, "numpy"):
            record = record.numpy()
        if isinstance(record, str):
            record = record.encode("utf-8")
        if not isinstance(record, (bytes, bytearray, memoryview)):
            raise TypeError(f"TFRecordWriter.write: expected bytes, got {type(record).__name__}")
        data = _frame(bytes(record))
        self._file.write(self._zip.compress(data) if self._zip else data)

    def flush(self):
        """Pushes what was written so far to the file."""
        if self._file is None:
            return
        if self._zip:
            self._file.write(self._zip.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self):
        """Finishes the file (the compressed stream's trailer too) and closes it."""
        if self._file is None:
            return
        if self._zip:
            self._file.write(self._zip.flush(zlib.Z_FINISH))
        self._file.close()
        self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


_CHUNK = 1 << 16


class _Stream:
    """The uncompressed bytes of a TFRecord file, read a bounded chunk at a time.

    A compressed stream is decompressed incrementally (never more than `_CHUNK` bytes of output
    per step), so a small file that decompresses to huge data costs only what is read; a
    compressed stream cut short (its writer flushed and then died, no trailer) ends where its
    data ends, as TensorFlow reads it.
    """

    def __init__(self, f, path, kind):
        self._f, self._path, self._kind = f, path, kind
        self._zip = self._new() if kind else None
        self._pending = b""     # compressed input not yet consumed
        self._buf = bytearray()
        self._done = False

    def _new(self):
        return zlib.decompressobj(31 if self._kind == "GZIP" else 15)

    def _more(self):
        """Adds up to _CHUNK bytes to the buffer; False at the end of the data."""
        if self._zip is None:
            chunk = self._f.read(_CHUNK)
            self._buf += chunk
            return bool(chunk)
        while not self._done:
            if not self._pending:
                self._pending = self._f.read(_CHUNK)
                if not self._pending:
                    self._done = True   # the end of the file (a cut-short stream ends here)
                    return False
            try:
                out = self._zip.decompress(self._pending, _CHUNK)
            except zlib.error as e:
                raise DataLossError(f"TFRecordDataset: {self._path} is not a valid {self._kind} "
                                    f"stream: {e}", op="TFRecordDataset") from None
            self._pending = self._zip.unconsumed_tail
            if self._zip.eof:   # the end of one member; another may follow (as gzip allows)
                self._pending = self._zip.unused_data + self._pending
                self._zip = self._new()
                if not self._pending:
                    self._pending = self._f.read(_CHUNK)
                    if not self._pending:
                        self._done = True
            if out:
                self._buf += out
                return True
        return False

    def read(self, n):
        """Up to `n` bytes (fewer only at the end of the data)."""
        while len(self._buf) < n and self._more():
            pass
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def at_end(self):
        return not self._buf and not self._more()


def read_records(path, compression_type=""):
    """Yields the records of the TFRecord file `path`, checking both checksums of each.

    Raises:
        DataLossError: on a corrupted or truncated record, naming the file and its offset.
        NotFoundError: if the file does not exist.
    """
    offset = 0

    def lost(what, why=""):
        return DataLossError(f"TFRecordDataset: {what} record at offset {offset} in {path}{why}",
                             op="TFRecordDataset")

    with _open(path, "rb", "TFRecordDataset") as f:
        stream = _Stream(f, path, compression_type)
        while not stream.at_end():
            head = stream.read(12)
            if len(head) < 12:
                raise lost("truncated")
            header = head[:8]
            if struct.unpack("<I", head[8:])[0] != masked_crc32c(header):
                raise lost("corrupted", ": the checksum of its length does not match")
            (length,) = struct.unpack("<Q", header)
            record = stream.read(length + 4)   # grows a chunk at a time: bounded by the data
            if len(record) < length + 4:
                raise lost("truncated")
            record, crc = record[:length], record[length:]
            if struct.unpack("<I", crc)[0] != masked_crc32c(record):
                raise lost("corrupted", ": the checksum of its data does not match")
            yield record
            offset += 12 + length + 4


def check_buffer_size(buffer_size):
    """Raises InvalidArgumentError for a negative TFRecordDataset buffer_size."""
    if buffer_size is not None and int(buffer_size) < 0:
        raise InvalidArgumentError(f"TFRecordDataset: buffer_size must be >= 0, got {buffer_size}",
                                   op="TFRecordDataset")
