"""`keras.utils.get_file` and what it stands on: downloads cached under the Keras home.

Owns: the cache location (`$KERAS_HOME`, else `~/.keras`, else `/tmp/.keras` when the home
is not writable, as Keras 3), downloading to a temporary file renamed into place (a failed
or interrupted download leaves nothing behind), file hashes (sha256, md5; `auto` picks by
length as Keras), and archive extraction (tar, tar.gz, tar.bz2, zip) that never writes
outside its target: a member whose path or link leaves the target folder is refused with a
warning naming it, as Keras's filters do. Behaviour and paths follow Keras 3.15's
`get_file`, so a file Keras cached is found here and the reverse.
"""
import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zipfile

__all__ = ["get_file", "hash_file", "validate_file", "extract_archive", "keras_home"]


def keras_home():
    """The Keras cache root: `$KERAS_HOME` if set, else `~/.keras` (`/tmp/.keras` when the
    home folder is not writable), as Keras 3."""
    env = os.environ.get("KERAS_HOME")
    if env:
        return env
    base = os.path.expanduser("~")
    if not os.access(base, os.W_OK):
        base = "/tmp"
    return os.path.join(base, ".keras")


def _hasher(algorithm, file_hash=None):
    if algorithm == "sha256" or (algorithm == "auto" and file_hash is not None
                                 and len(file_hash) == 64):
        return hashlib.sha256()
    if algorithm in ("md5", "auto"):
        return hashlib.md5()
    raise ValueError(f"hash_algorithm must be 'auto', 'sha256' or 'md5', got {algorithm!r}")


def hash_file(fpath, algorithm="sha256", chunk_size=65535):
    """The hex digest of a file (`algorithm` "sha256", "md5" or "auto" = sha256), read in
    chunks of `chunk_size` bytes.

    Example:
        >>> hash_file("empty.bin")
        'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
    """
    hasher = _hasher(algorithm) if isinstance(algorithm, str) else algorithm
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def validate_file(fpath, file_hash, algorithm="auto", chunk_size=65535):
    """Whether the file's sha256 or md5 digest equals `file_hash` ("auto": 64 hex digits is
    sha256, anything else md5)."""
    return hash_file(fpath, _hasher(algorithm, file_hash), chunk_size) == str(file_hash)


def _inside(base, relative):
    """The resolved path of `relative` under `base` when it stays inside `base`, else None."""
    path = os.path.realpath(os.path.join(base, relative))
    try:
        return path if os.path.commonpath([path, base]) == base else None
    except ValueError:
        return None


def _refused(name):
    warnings.warn(f"Skipping invalid path during archive extraction: {name!r} (it would be "
                  "written outside the extraction folder)", stacklevel=4)


def _safe_tar_members(archive, base):
    for info in archive:
        if info.issym() or info.islnk():
            where = _inside(base, info.name)
            target = (_inside(base, info.linkname) if info.islnk() else
                      where and _inside(base, os.path.join(os.path.dirname(where), info.linkname)))
            ok = where is not None and target is not None
        else:
            ok = (_inside(base, info.name) is not None and not info.isdev()
                  and not os.path.isabs(info.name))
        if ok:
            yield info
        else:
            _refused(info.name)


def _safe_zip_members(archive, base):
    for info in archive.infolist():
        if _inside(base, info.filename) is not None and not os.path.isabs(info.filename):
            yield info
        else:
            _refused(info.filename)


def extract_archive(file_path, path=".", archive_format="auto"):
    """Extracts a tar (plain, gz, bz2, xz) or zip archive into `path`; members that would land
    outside `path` (`..`, absolute paths, links pointing out) are skipped with a warning.

    Args:
        archive_format: "auto" (tar then zip), "tar", "zip", a list of those, or None.

    Returns:
        True if the file was an archive of an allowed format and was extracted, else False.
    """
    if archive_format is None:
        return False
    if archive_format == "auto":
        archive_format = ["tar", "zip"]
    if isinstance(archive_format, str):
        archive_format = [archive_format]
    file_path, path = os.fspath(file_path), os.fspath(path)
    for kind in archive_format:
        if kind == "tar":
            is_kind, opener = tarfile.is_tarfile, tarfile.open
        elif kind == "zip":
            is_kind, opener = zipfile.is_zipfile, zipfile.ZipFile
        else:
            raise ValueError(f"archive_format entries must be 'tar' or 'zip', got {kind!r}")
        if not is_kind(file_path):
            continue
        os.makedirs(path, exist_ok=True)
        base = os.path.realpath(path)
        try:
            with opener(file_path) as archive:
                if kind == "zip":
                    archive.extractall(path, members=list(_safe_zip_members(archive, base)))
                else:
                    kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                    archive.extractall(path, members=list(_safe_tar_members(archive, base)),
                                       **kwargs)
        except (tarfile.TarError, RuntimeError, KeyboardInterrupt, zipfile.BadZipFile, OSError):
            if os.path.exists(path):
                if os.path.isfile(path):
                    os.remove(path)
                else:
                    shutil.rmtree(path)
            raise
        return True
    return False


def _download(origin, target):
    """Fetches `origin` into `target` through a temporary file in the same folder."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".download-")
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(origin) as response:
                    for chunk in iter(lambda: response.read(1 << 16), b""):
                        out.write(chunk)
            except urllib.error.HTTPError as e:
                raise Exception(f"URL fetch failure on {origin}: {e.code} -- {e.msg}") from e
            except urllib.error.URLError as e:
                raise Exception(f"URL fetch failure on {origin}: {e.errno} -- {e.reason}") from e
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None,
             cache_subdir="datasets", hash_algorithm="auto", extract=False,
             archive_format="auto", cache_dir=None, force_download=False):
    """Downloads `origin` into the Keras cache unless it is already there, as Keras 3's
    `keras.utils.get_file`, and returns the local path.

    The file lands in `cache_dir/cache_subdir/fname` (`cache_dir` defaults to `$KERAS_HOME`
    or `~/.keras`; `cache_subdir` "datasets"; an absolute `cache_subdir` is used as is). A
    cached file is reused, unless `force_download` or its hash differs from `file_hash`
    (then it is fetched again); a fresh download whose hash differs is a ValueError. With
    `extract=True` the archive is unpacked (never outside its folder) and the folder is
    returned: `<fname>_extracted` when `fname` has an extension, else `fname` itself.

    Example:
        >>> path = keras.utils.get_file(origin="https://example.com/data.csv")
        >>> path.endswith(".keras/datasets/data.csv")
        True
    """
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if cache_dir is None:
        cache_dir = keras_home()
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    base = os.path.expanduser(os.fspath(cache_dir))
    if os.path.exists(base) and not os.access(base, os.W_OK):
        base = os.path.join("/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir(), ".keras")
    datadir = os.path.join(base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    given = fname
    fname = os.fspath(fname) if fname is not None else None
    if not fname:
        fname = os.path.basename(urllib.parse.urlsplit(origin).path)
        if not fname:
            raise ValueError(f"Can't parse the file name from the origin provided: {origin!r}. "
                             "Please specify the `fname` argument.")
    elif os.sep in fname or (os.altsep and os.altsep in fname):
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify the "
                         f"file's parent directory, use the `cache_dir` argument. Received: "
                         f"fname={fname}")
    if extract or untar:
        if given and "." in fname:
            target = os.path.join(datadir, fname)
            extraction_dir = os.path.join(datadir, fname[:fname.find(".")] + "_extracted")
        else:
            extraction_dir = os.path.join(datadir, fname)
            target = os.path.join(datadir, f"{fname}_archive")
    else:
        target = os.path.join(datadir, fname)

    download = force_download or not os.path.exists(target)
    if not download and file_hash is not None and \
            not validate_file(target, file_hash, algorithm=hash_algorithm):
        print(f"A local file was found, but it seems to be incomplete or outdated because the "
              f"{hash_algorithm} file hash does not match the original value of {file_hash} so "
              "we will re-download the data.")
        download = True
    if download:
        print(f"Downloading data from {origin}")
        _download(origin, target)
        if file_hash is not None and not validate_file(target, file_hash, hash_algorithm):
            os.remove(target)
            raise ValueError(f"Incomplete or corrupted file detected. The {hash_algorithm} file "
                             f"hash does not match the provided value of {file_hash}.")
    if extract or untar:
        if not extract_archive(target, extraction_dir, "tar" if untar else archive_format):
            warnings.warn("Could not extract archive.", stacklevel=2)
        return extraction_dir
    return target
