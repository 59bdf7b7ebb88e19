"""File I/O shared by every saved format: atomic writes, and reads that are bounded and checked.

Owns: how saves replace what is on disk (`write_file_atomically` for one file,
`update_directory` for a saved-model directory, stale temporaries removed by
the next save), how loads open and read files (`open_regular`, `read_json`,
`read_zip_member`, `read_npz`), and the load limits (`set_load_limits`,
`LoadBudget`).

Invariants:
- A save never leaves a half-written file under a name a loader reads: data go
  to a temporary entry named `.tmp-*` in the same folder, are flushed to disk,
  and `os.replace` puts them in place (one rename is the commit point). A save
  killed at any instant leaves the old or the new file; its `.tmp-*` entries
  are removed by the next save of that file (entries whose writer still runs
  are locked and left alone).
- A load opens only regular files (a symbolic link inside a saved-model
  directory, a named pipe, a device or a socket is refused before it is
  read: `os.lstat` first, then `O_NONBLOCK` and `fstat` on what was opened),
  reads at most the bytes its `LoadBudget` allows (checked against each zip
  member's declared size before decompressing, and against every `.npy`
  header before its array is allocated), and reports every defect as
  `LoadError` naming the file and what was wrong, never as a zip, zlib or
  numpy exception.
"""
import errno
import math
import os
import shutil
import stat
import time
import zipfile

import numpy as np

from .graph.serialization import LoadError

try:  # advisory locks: which temporaries belong to a save still running (POSIX only)
    import fcntl
except ImportError:  # pragma: no cover -- Windows: stale entries are judged by age instead
    fcntl = None

__all__ = ["set_load_limits", "get_load_limits", "LoadBudget", "open_regular", "open_zip", "read_json",
           "read_zip_member", "read_npz", "read_lines", "write_file_atomically",
           "update_directory"]

MiB = 1 << 20
MARGIN = 64 * MiB        # added to the declared weights: metadata, names, small arrays
DECLARED_FACTOR = 8      # optimizer slots (up to 3 per weight) times two levels of nesting
JSON_LIMIT = 64 * MiB    # a config or saved_model.json larger than this is not a model's
MAX_MEMBERS = 100_000    # zip entries in one archive (a model's arrays are far fewer)
TEMP_PREFIX = ".tmp-"
_STALE_AGE_S = 3600
_CHUNK = 16 * MiB        # arrays are read in pieces: no second copy of a whole array      # without locks (Windows), a temporary this old is stale

_limits = {"max_bytes": None, "max_member_bytes": None}
_step_hook = None        # tests: called with the name of each step of a save (to kill it there)


def _step(name):
    if _step_hook is not None:
        _step_hook(name)


# ------------------------------------------------------------------ limits

def set_load_limits(max_bytes=None, max_member_bytes=None):
    """Sets the process-wide limits of every load (`load_model`, `load_weights`,
    `tl.saved_model.load`) that is not given its own.

    Args:
        max_bytes: the most bytes one load may read out of its files after decompression,
            at every level of nesting (a `.keras` file's weights archive and the arrays
            inside it both count). None: sized to the model, as
            `8 * declared_weight_bytes + 64 MiB`, where the declared weights are the
            model's (`.keras`, `.weights.npz`) or those `saved_model.json` declares.
        max_member_bytes: the most bytes any one member (a JSON file, a zip member, an
            array) may hold. None: 64 MiB for JSON files and configs, `max_bytes` for arrays.

    Returns:
        The previous limits, as a dict (pass it back as keywords to restore them).

    Raises:
        ValueError: for a limit that is not a positive int or None.

    Example:
        >>> previous = tl.saving.set_load_limits(max_bytes=2 << 30)   # 2 GiB
        >>> tl.saving.set_load_limits(**previous)
    """
    for name, value in (("max_bytes", max_bytes), ("max_member_bytes", max_member_bytes)):
        _check_limit(name, value)
    previous = dict(_limits)
    _limits.update(max_bytes=max_bytes, max_member_bytes=max_member_bytes)
    return previous


def get_load_limits():
    """The process-wide load limits set by `set_load_limits` (None: sized to the model)."""
    return dict(_limits)


def _check_limit(name, value):
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{name} must be a positive int (bytes) or None, got {value!r}")


class LoadBudget:
    """What one load may still read: a total over all members, and a cap per member.

    Until `size_to` learns the model's declared weights, only JSON members can be
    read (at most 64 MiB each, or the limits given).
    """

    def __init__(self, label, max_bytes=None, max_member_bytes=None):
        _check_limit("max_bytes", max_bytes)
        _check_limit("max_member_bytes", max_member_bytes)
        self.label = label
        self.max_bytes = max_bytes if max_bytes is not None else _limits["max_bytes"]
        self.max_member_bytes = max_member_bytes if max_member_bytes is not None else \
            _limits["max_member_bytes"]
        self.limit = self.max_bytes     # None until sized
        self.used = 0

    def size_to(self, declared_bytes):
        """Sizes the total to the model's declared weights (unless a limit was given)."""
        if self.max_bytes is None:
            self.limit = DECLARED_FACTOR * int(declared_bytes) + MARGIN + self.used

    def json_limit(self):
        """The most bytes one JSON member may hold (64 MiB unless a limit was given)."""
        if self.max_member_bytes is not None:
            return self.max_member_bytes
        return min(JSON_LIMIT, self.max_bytes or JSON_LIMIT)

    def take(self, nbytes, what, json=False):
        """Accounts `nbytes` read for `what`; LoadError (naming the file) past a limit."""
        cap = self.json_limit() if json else self.max_member_bytes
        if cap is not None and nbytes > cap:
            raise LoadError(f"{self.label}: {what} holds {nbytes} bytes, more than the {cap} "
                            f"allowed for one member{_HOW_TO_RAISE}")
        total = self.limit
        if total is None and not json:   # arrays before the model is known: the margin only
            total = MARGIN
        if total is not None and self.used + nbytes > total:
            raise LoadError(f"{self.label}: {what} holds {nbytes} bytes, which would bring the "
                            f"load to {self.used + nbytes} bytes, more than the {total} allowed "
                            f"for this model{_HOW_TO_RAISE}")
        self.used += nbytes


_HOW_TO_RAISE = (" (a damaged or hostile file, or a model larger than declared; to allow more, "
                 "pass max_bytes= / max_member_bytes= or call tl.saving.set_load_limits)")


# ------------------------------------------------------------------ opening and reading

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))


def _kind(mode):
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path, follow_symlinks=False):
    """Opens `path` for reading if it is a regular file: (binary file object, size).

    Never blocks and never reads a special file: the entry is checked with `os.lstat`
    before it is opened (a symbolic link is refused unless `follow_symlinks`, and then
    its target is checked), opened with `O_NONBLOCK` (a FIFO swapped in meanwhile does
    not block), and checked again with `fstat`.

    Raises:
        FileNotFoundError: if nothing is at `path`.
        LoadError: naming the file, for a link, pipe, device, socket or directory.
    """
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        if not follow_symlinks:
            raise LoadError(f"{path}: is a symbolic link; a saved model's files must be regular "
                            "files (copy the file instead of linking it)")
        st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise LoadError(f"{path}: is {_kind(st.st_mode)}, not a regular file")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | \
        getattr(os, "O_BINARY", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:   # a link swapped in after lstat; other errors (permissions) stay
        if e.errno == errno.ELOOP:
            raise LoadError(f"{path}: is a symbolic link; a saved model's files must be "
                            "regular files") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise LoadError(f"{path}: is {_kind(st.st_mode)}, not a regular file")
    return os.fdopen(fd, "rb"), st.st_size


def read_lines(path, what, limit=JSON_LIMIT):
    """The UTF-8 lines of the regular file `path` (a vocabulary: one token a line; a final
    newline ends the last line). ValueError naming `what` when there is no such file."""
    try:
        f, size = open_regular(path, follow_symlinks=True)
    except FileNotFoundError:
        raise ValueError(f"{what}: the vocabulary file {path!r} does not exist") from None
    with f:
        if size > limit:
            raise LoadError(f"{path}: {size} bytes, more than the {limit} a vocabulary may hold")
        text = f.read(limit + 1).decode("utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def read_json(path, budget, follow_symlinks=False):
    """The bytes of a JSON file, checked to be a regular file within the budget's JSON limit."""
    f, size = open_regular(path, follow_symlinks)
    with f:
        budget.take(size, "the file", json=True)
        raw = f.read(size + 1)
    if len(raw) != size:
        raise LoadError(f"{path}: changed size while it was read")
    return raw


def read_zip_member(archive, name, budget, json=False):
    """The bytes of one zip member, its declared size checked against the budget before any
    byte is decompressed (zipfile never yields more than the declared size)."""
    info = archive.getinfo(name)
    budget.take(info.file_size, repr(name), json=json)
    with archive.open(info) as f:
        data = f.read(info.file_size + 1)
    if len(data) != info.file_size:
        raise zipfile.BadZipFile(f"member {name!r} holds {len(data)} bytes, its header says "
                                 f"{info.file_size}")
    return data


def read_npz(source, budget, where="the arrays"):
    """{key: array} of an `.npz` archive (a path, or a seekable binary file object).

    Each member's declared size is charged to `budget` before it is read, each `.npy`
    header must declare exactly the bytes that follow it (so no array is allocated from a
    header alone), object arrays are refused (nothing is unpickled), and the zip's CRC is
    checked. Any defect is a LoadError naming `budget.label`.
    """
    try:
        with open_zip(source) as archive:
            infos = archive.infolist()
            keys = {}
            for info in infos:
                if not info.filename.endswith(".npy") or info.filename[:-4] in keys:
                    raise LoadError(f"unexpected member {info.filename!r}")
                keys[info.filename[:-4]] = info
            for info in infos:
                budget.take(info.file_size, f"{where}: member {info.filename!r}")
            return {key: _read_npy(archive, info) for key, info in keys.items()}
    except LoadError as e:
        text = str(e)
        raise LoadError(text if text.startswith(budget.label) else
                        f"{budget.label}: {where}: {text}") from None
    except MemoryError:
        raise LoadError(f"{budget.label}: {where}: not enough memory for the arrays it declares"
                        f"{_HOW_TO_RAISE}") from None
    except Exception as e:  # noqa: BLE001 -- zip, zlib, npy header: every defect is the file's
        raise LoadError(f"{budget.label}: {where}: truncated or corrupted "
                        f"({type(e).__name__}: {e})") from None


def open_zip(source):
    """A zipfile.ZipFile of `source`, refused (LoadError) when its central directory lists
    more than MAX_MEMBERS entries: zipfile would hold an object per entry before any check."""
    if hasattr(source, "seek"):
        end = getattr(zipfile, "_EndRecData", None)   # reads only the end record
        record = end(source) if end is not None else None
        if record is not None and record[4] > MAX_MEMBERS:   # _ECD_ENTRIES_TOTAL
            raise LoadError(f"the archive lists {record[4]} members, more than the "
                            f"{MAX_MEMBERS} a saved model may hold")
        source.seek(0)
    else:   # a path: a FIFO or device would block or never end
        mode = os.stat(source).st_mode
        if not stat.S_ISREG(mode):
            raise LoadError(f"{os.fspath(source)}: is {_kind(mode)}, not a regular file")
    return zipfile.ZipFile(source)


def _read_npy(archive, info):
    with archive.open(info) as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise LoadError(f"member {info.filename!r}: npy format version {version} is not "
                            "supported")
        if dtype.hasobject:
            raise LoadError(f"member {info.filename!r}: holds Python objects, which are never "
                            "loaded (no pickle)")
        header = f.tell()
        count = math.prod(shape)
        if header + count * dtype.itemsize != info.file_size:
            raise LoadError(f"member {info.filename!r}: its header declares {dtype} {shape} "
                            f"({count * dtype.itemsize} bytes), the member holds "
                            f"{info.file_size - header}")
        array = np.empty(shape, dtype, order="F" if fortran else "C")
        view = memoryview(array.reshape(-1, order="A").view(np.uint8)) if count else None
        done = 0
        while view is not None and done < len(view):
            n = f.readinto(view[done:done + _CHUNK])
            if not n:
                raise LoadError(f"member {info.filename!r}: ends early")
            done += n
        if f.read(1):  # also reaches the end of the member, where zipfile checks its CRC
            raise LoadError(f"member {info.filename!r}: holds more bytes than its header declares")
    return array


def array_bytes(shape, dtype):
    """Bytes of an array of a fully known `shape` and numpy-able `dtype` (0 when unknown)."""
    try:
        if shape is None or any(d is None or d < 0 for d in shape):
            return 0
        return math.prod(int(d) for d in shape) * np.dtype(dtype).itemsize
    except (TypeError, ValueError, OverflowError):
        return 0


# ------------------------------------------------------------------ atomic writing

def _create_temp(folder, stem):
    """A new locked temporary file `.tmp-<stem>.<random>` in `folder`: (path, fd)."""
    mode = 0o666
    for _ in range(100):
        path = os.path.join(folder, f"{TEMP_PREFIX}{stem}.{os.urandom(6).hex()}")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) |
                         getattr(os, "O_BINARY", 0), mode)
        except FileExistsError:
            continue
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)   # held until closed: the entry is not stale
        return path, fd
    raise FileExistsError(f"cannot create a temporary file in {folder!r}")


def _is_stale(path):
    """True for a temporary no running save holds (its lock is free, or, without locks, old)."""
    if fcntl is None:
        try:
            return time.time() - os.lstat(path).st_mtime > _STALE_AGE_S
        except OSError:
            return False
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError:
        return os.path.islink(path)   # a link someone put there is not ours to follow
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # folders: older versions' temporaries
            return False
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def remove_stale(folder, matches):
    """Removes the entries of `folder` whose name `matches` and that no running save holds."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if matches(name) and _is_stale(os.path.join(folder, name)):
            _remove(os.path.join(folder, name))


def _remove(path):
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.remove(path)
    except FileNotFoundError:
        pass


def _fsync_dir(folder):
    """Makes renames in `folder` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_temp(folder, stem, write, mode=None):
    """Writes a locked temporary via `write(file)`, flushed to disk: (path, open file)."""
    tmp, fd = _create_temp(folder, stem)
    f = os.fdopen(fd, "wb")
    try:
        if mode is not None:
            os.chmod(tmp, mode)
        write(f)
        f.flush()
        os.fsync(f.fileno())
    except BaseException:
        f.close()
        _remove(tmp)
        raise
    return tmp, f


def _file_mode(path):
    """The permissions the file would get from a plain open(): the old file's, else umask's."""
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_file_atomically(path, write, legacy_temps=None):
    """Replaces the file `path` by what `write(binary_file)` writes, atomically.

    The data go to a temporary `.tmp-<name>.*` beside `path`, are flushed to disk, and
    one `os.replace` puts them in place: a reader (or a crash) sees the old file or the
    new one, never a part. Temporaries left by earlier killed saves of `path` are removed
    (and unlocked entries matching the regex `legacy_temps`: older versions' temporaries).
    """
    path = os.path.abspath(os.fspath(path))
    folder, name = os.path.split(path)
    os.makedirs(folder, exist_ok=True)
    remove_stale(folder, lambda entry: entry.startswith(f"{TEMP_PREFIX}{name}.") or (
        legacy_temps is not None and legacy_temps.fullmatch(entry) is not None))
    tmp, f = _write_temp(folder, name, write, _file_mode(path))
    try:
        _step("file_written")
        os.replace(tmp, path)
        _step("file_replaced")
    except BaseException:
        _remove(tmp)
        raise
    finally:
        f.close()
    _fsync_dir(folder)


class _DirectoryLock:
    """An exclusive advisory lock on a directory, so two saves into it take turns."""

    def __init__(self, folder):
        self.fd = None
        if fcntl is not None:
            try:
                self.fd = os.open(folder, os.O_RDONLY)
                fcntl.flock(self.fd, fcntl.LOCK_EX)
            except OSError:
                self.release()

    def release(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def update_directory(folder, files, pointer, keep, is_ours):
    """Writes `files` ({name: bytes}) into `folder`, `pointer` last: the commit point.

    Each file goes to a temporary, is flushed, and is renamed into place; the data files
    carry content-derived names, so until `pointer` (the file a loader reads first, naming
    the others) is replaced, the folder still holds the complete previous version, and
    after that the complete new one. Then every entry `is_ours(name)` says belongs to the
    format but `keep(name)` (the new version's files) does not is removed, along with
    `.tmp-*` entries of killed saves. Saves into one folder take turns (an advisory lock).
    """
    os.makedirs(folder, exist_ok=True)
    lock = _DirectoryLock(folder)
    try:
        _step("locked")
        remove_stale(folder, lambda name: name.startswith(TEMP_PREFIX))  # of killed saves
        _step("cleaned")
        order = [n for n in files if n != pointer] + [pointer]
        for name in order:
            tmp, f = _write_temp(folder, name, lambda out, data=files[name]: out.write(data))
            try:
                _step(f"written {name}")
                os.replace(tmp, os.path.join(folder, name))
            except BaseException:
                _remove(tmp)
                raise
            finally:
                f.close()
            _step(f"renamed {name}")
            _fsync_dir(folder)   # each rename durable before the next: the pointer comes last
        _step("synced")
        for name in os.listdir(folder):   # the previous version's files, now unreferenced
            if is_ours(name) and not keep(name):
                _remove(os.path.join(folder, name))
                _step(f"removed {name}")
    finally:
        lock.release()
