"""Keras 3's data utilities (`keras.utils`): `timeseries_dataset_from_array`,
`split_dataset`, `get_file`, and the image files helpers
(`load_img`, `img_to_array`, `array_to_img`, `save_img`, `image_dataset_from_directory`).

Owns: host-side data preparation, numpy in and numpy (or `tl.data.Dataset`) out, as Keras's
utilities behave. `get_file` downloads into the cache (`$KERAS_HOME` or `~/.keras`,
`<cache_subdir>`), checks the hash before the file takes its name (a failed or corrupted
download leaves nothing behind), and extracts archives only inside their target folder:
members with absolute paths, `..`, links or devices are refused. Images need Pillow (the
`images` extra); its absence is an ImportError naming the install.
"""
import hashlib
import os
import tarfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile

import numpy as np

from .data import Dataset
from .file_io import write_file_atomically

__all__ = ["timeseries_dataset_from_array", "split_dataset", "get_file", "load_img", "img_to_array", "array_to_img", "save_img",
           "image_dataset_from_directory"]


# ------------------------------------------------------------------ series

def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1,
                                  sampling_rate=1, batch_size=128, shuffle=False, seed=None,
                                  start_index=None, end_index=None):
    """A `tl.data.Dataset` of sliding windows over `data` (with the target after each window's
    start), as `keras.utils.timeseries_dataset_from_array`.

    Window `i` holds `data[s, s + r, ..., s + r * (sequence_length - 1)]` for
    `s = start_index + i * sequence_stride` and sampling rate `r`; its target is
    `targets[s]`.

    Example:
        >>> ds = tl.keras.utils.timeseries_dataset_from_array(np.arange(10), None, 3,
        ...                                                   batch_size=2)
    """
    data = np.asarray(data)
    start = 0 if start_index is None else int(start_index)
    end = len(data) if end_index is None else int(end_index)
    for name, value in (("sequence_length", sequence_length), ("sequence_stride",
                                                                sequence_stride),
                        ("sampling_rate", sampling_rate)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value}")
    span = (sequence_length - 1) * sampling_rate + 1
    starts = np.arange(start, end - span + 1, sequence_stride)
    if shuffle:
        np.random.default_rng(seed).shuffle(starts)
    index = starts[:, None] + np.arange(sequence_length)[None, :] * sampling_rate
    windows = data[index] if len(starts) else np.zeros((0, sequence_length) + data.shape[1:],
                                                       data.dtype)
    if targets is not None:
        dataset = Dataset.from_tensor_slices((windows, np.asarray(targets)[starts]))
    else:
        dataset = Dataset.from_tensor_slices(windows)
    return dataset.batch(batch_size) if batch_size is not None else dataset


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None):
    """Splits arrays (or a tuple of arrays) into two `tl.data.Dataset`s, as
    `keras.utils.split_dataset`: sizes are fractions (floats) or counts (ints); one may be
    left out and takes the rest.

    Example:
        >>> left, right = tl.keras.utils.split_dataset(np.arange(10), left_size=0.8)
    """
    arrays = tuple(np.asarray(a) for a in dataset) if isinstance(dataset, (tuple, list)) \
        else (np.asarray(dataset),)
    n = len(arrays[0])

    def count(size):
        if size is None:
            return None
        if isinstance(size, float):
            if not 0 < size < 1:
                raise ValueError(f"a float size must be in (0, 1), received {size}")
            return int(round(size * n))
        if size < 0 or size > n:
            raise ValueError(f"a size must be in [0, {n}], received {size}")
        return int(size)

    left, right = count(left_size), count(right_size)
    if left is None and right is None:
        left = int(round(0.5 * n))
    left = n - right if left is None else left
    right = n - left if right is None else right
    if left + right > n:
        raise ValueError(f"left_size + right_size ({left} + {right}) exceeds the {n} samples")
    order = np.arange(n)
    if shuffle:
        np.random.default_rng(seed).shuffle(order)

    def make(index):
        parts = tuple(a[index] for a in arrays)
        return Dataset.from_tensor_slices(parts if len(parts) > 1 else parts[0])

    return make(order[:left]), make(order[left:left + right])


# ------------------------------------------------------------------ get_file

def _keras_home():
    return os.path.expanduser(os.environ.get("KERAS_HOME") or os.path.join("~", ".keras"))


def _hash_file(path, algorithm, chunk_size=1 << 16):
    h = hashlib.sha256() if algorithm == "sha256" else hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk_size), b""):
            h.update(block)
    return h.hexdigest()


def _algorithm(file_hash, hash_algorithm):
    if hash_algorithm in ("sha256", "md5"):
        return hash_algorithm
    if hash_algorithm != "auto":
        raise ValueError(f"hash_algorithm must be 'auto', 'sha256' or 'md5', got "
                         f"{hash_algorithm!r}")
    return "sha256" if len(file_hash) == 64 else "md5"


def _inside(root, name):
    target = os.path.realpath(os.path.join(root, name))
    return target == os.path.realpath(root) or \
        target.startswith(os.path.realpath(root) + os.sep)


def _extract(path, folder, archive_format):
    """Extracts a tar or zip archive into `folder`, refusing any member that would land outside
    it (absolute paths, `..`), links and devices. Returns True if `path` was an archive."""
    formats = ("tar", "zip") if archive_format == "auto" else \
        (archive_format,) if isinstance(archive_format, str) else tuple(archive_format or ())
    if "tar" in formats and tarfile.is_tarfile(path):
        with tarfile.open(path) as archive:
            members = archive.getmembers()
            for m in members:
                if not (m.isfile() or m.isdir()) or os.path.isabs(m.name) or \
                        not _inside(folder, m.name):
                    raise ValueError(f"Refusing to extract {path!r}: its member {m.name!r} "
                                     "is a link or device or lands outside the target folder")
            os.makedirs(folder, exist_ok=True)
            archive.extractall(folder, members=members, filter="data")
        return True
    if "zip" in formats and zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                if os.path.isabs(name) or name.startswith(("/", "\\")) or \
                        not _inside(folder, name):
                    raise ValueError(f"Refusing to extract {path!r}: its member {name!r} "
                                     "lands outside the target folder")
            os.makedirs(folder, exist_ok=True)
            archive.extractall(folder)
        return True
    return False


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None,
             cache_subdir="datasets", hash_algorithm="auto", extract=False,
             archive_format="auto", cache_dir=None, force_download=False):
    """Downloads a file from a URL unless it is in the cache, as `keras.utils.get_file`.

    The file lands in `<cache_dir>/<cache_subdir>/<fname>` (`cache_dir` defaults to
    `$KERAS_HOME` or `~/.keras`). A cached file whose hash does not match `file_hash` is
    downloaded again. A download is written to a temporary file and takes its name only
    once complete and, when `file_hash` is given, checked. Extraction (`extract=True`)
    writes only inside `<fname>_extracted` (or `<fname>` when the name has no dot).

    Args:
        fname: the file's name in the cache (default: the last part of `origin`'s path).
        origin: the URL.
        file_hash: the expected sha256 (or md5) hex digest.
        extract: extract a tar or zip archive; `untar` is the older name.
        cache_dir, cache_subdir: where the cache is.
        force_download: download even when the file is cached.

    Returns:
        The path of the file (or of the extraction folder).

    Raises:
        ValueError: without an origin, for a hash mismatch after download (nothing kept),
            or an archive member that would land outside its folder.
        Exception: naming the URL, when the download fails.

    Example:
        >>> path = tl.keras.utils.get_file(origin="https://example.com/data.csv")
    """
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    base = os.path.expanduser(os.fspath(cache_dir)) if cache_dir is not None else _keras_home()
    datadir = os.path.join(base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    given = fname is not None
    fname = os.fspath(fname) if given else \
        os.path.basename(urllib.parse.urlsplit(origin).path)
    if not fname:
        raise ValueError(f"Can't parse the file name from the origin provided: '{origin}'. "
                         "Please specify the `fname` argument.")
    if os.sep in fname or "/" in fname:
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify the "
                         f"file's parent directory, use the `cache_dir` argument. Received: "
                         f"fname={fname}")
    extracting = extract or untar
    if extracting and given and "." in fname:
        target = os.path.join(datadir, fname)
        folder = os.path.join(datadir, f"{fname[:fname.find('.')]}_extracted")
    elif extracting:
        target, folder = os.path.join(datadir, f"{fname}_archive"), os.path.join(datadir, fname)
    else:
        target, folder = os.path.join(datadir, fname), None
    algorithm = _algorithm(file_hash, hash_algorithm) if file_hash else None
    download = force_download or not os.path.exists(target) or \
        (file_hash is not None and _hash_file(target, algorithm) != file_hash)
    if download:
        print(f"Downloading data from {origin}")

        def write(f):
            digest = hashlib.sha256() if algorithm == "sha256" else hashlib.md5()
            try:
                with urllib.request.urlopen(origin) as response:   # noqa: S310 -- user's URL
                    for block in iter(lambda: response.read(1 << 16), b""):
                        f.write(block)
                        digest.update(block)
            except urllib.error.HTTPError as e:
                raise Exception(f"URL fetch failure on {origin}: {e.code} -- {e.msg}") from None
            except urllib.error.URLError as e:
                raise Exception(f"URL fetch failure on {origin}: {e.errno} -- {e.reason}") \
                    from None
            if file_hash is not None and digest.hexdigest() != file_hash:
                raise ValueError(f"Incomplete or corrupted file detected. The {algorithm} "
                                 f"file hash does not match the provided value of {file_hash}.")

        write_file_atomically(target, write)
    if folder is not None:
        if download or not os.path.exists(folder):
            _extract(target, folder, archive_format)
        return folder
    return target


# ------------------------------------------------------------------ images

def _pil():
    try:
        from PIL import Image  # noqa: PLC0415 -- optional: the `images` extra
    except ImportError:
        raise ImportError("Image utilities need Pillow, which is not installed: "
                          "pip install pillow (or pip install trainlib[images])") from None
    return Image


_INTERPOLATIONS = {"nearest": "NEAREST", "bilinear": "BILINEAR", "bicubic": "BICUBIC",
                   "lanczos": "LANCZOS", "box": "BOX", "hamming": "HAMMING"}


def load_img(path, color_mode="rgb", target_size=None, interpolation="nearest",
             keep_aspect_ratio=False):
    """Loads an image file as a PIL image (`color_mode` "rgb", "rgba" or "grayscale";
    `target_size` (height, width) resizes it), as `keras.utils.load_img`."""
    Image = _pil()
    with open(os.fspath(path), "rb") as f:
        img = Image.open(f)
        img.load()
    modes = {"grayscale": "L", "rgb": "RGB", "rgba": "RGBA"}
    if color_mode not in modes:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if img.mode != modes[color_mode] and not (color_mode == "grayscale" and
                                              img.mode in ("L", "I;16", "I")):
        img = img.convert(modes[color_mode])
    if target_size is not None:
        height, width = target_size
        if (img.size[0], img.size[1]) != (width, height):
            if interpolation not in _INTERPOLATIONS:
                raise ValueError(f"Invalid interpolation method {interpolation!r}; supported: "
                                 f"{sorted(_INTERPOLATIONS)}")
            resample = getattr(Image.Resampling, _INTERPOLATIONS[interpolation])
            if keep_aspect_ratio:   # crop the centre to the target's aspect ratio first
                w, h = img.size
                crop_w, crop_h = min(w, h * width // height), min(h, w * height // width)
                left, top = (w - crop_w) // 2, (h - crop_h) // 2
                img = img.crop((left, top, left + crop_w, top + crop_h))
            img = img.resize((width, height), resample)
    return img


def img_to_array(img, data_format="channels_last", dtype="float32"):
    """A PIL image as a numpy array `(height, width, channels)` (channels first with
    `data_format="channels_first"`)."""
    x = np.asarray(img, dtype=dtype)
    if x.ndim == 2:
        x = x[..., None]
    elif x.ndim != 3:
        raise ValueError(f"Unsupported image shape: {x.shape}")
    return np.moveaxis(x, -1, 0) if data_format == "channels_first" else x


def array_to_img(x, data_format="channels_last", scale=True, dtype=None):
    """A numpy array `(height, width, channels)` (1, 3 or 4 channels) as a PIL image; with
    `scale`, values are shifted and scaled to 0..255."""
    Image = _pil()
    x = np.asarray(x, dtype=dtype or "float32")
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with "
                         f"shape: {x.shape}")
    if data_format == "channels_first":
        x = np.moveaxis(x, 0, -1)
    if scale:
        x = x - np.min(x)
        peak = np.max(x)
        if peak != 0:
            x = x / peak
        x = x * 255
    channels = x.shape[-1]
    modes = {1: "L", 3: "RGB", 4: "RGBA"}
    if channels not in modes:
        raise ValueError(f"Unsupported channel number: {channels}")
    data = x.astype("uint8")
    return Image.fromarray(data[..., 0] if channels == 1 else data, modes[channels])


def save_img(path, x, data_format="channels_last", file_format=None, scale=True, **kwargs):
    """Writes a numpy array (or a PIL image) as an image file, atomically; the format comes
    from `file_format` or the extension."""
    img = array_to_img(x, data_format=data_format, scale=scale) if isinstance(x, np.ndarray) \
        or hasattr(x, "numpy") else x
    path = os.fspath(path)
    fmt = file_format or os.path.splitext(path)[1].lstrip(".").upper() or None
    fmt = "JPEG" if fmt in ("JPG",) else fmt
    if img.mode == "RGBA" and fmt == "JPEG":
        img = img.convert("RGB")
    write_file_atomically(path, lambda f: img.save(f, format=fmt, **kwargs))


_IMAGE_EXTENSIONS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")


def image_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                 class_names=None, color_mode="rgb", batch_size=32,
                                 image_size=(256, 256), shuffle=True, seed=None,
                                 validation_split=None, subset=None, interpolation="bilinear",
                                 follow_links=False, crop_to_aspect_ratio=False,
                                 verbose=True):
    """A `tl.data.Dataset` of `(images, labels)` batches from a folder with one subfolder per
    class, as `keras.utils.image_dataset_from_directory` (images resized to `image_size`,
    float32 0..255; labels by `label_mode`: "int", "categorical", "binary" or None).

    Example:
        >>> train = tl.keras.utils.image_dataset_from_directory("photos", image_size=(64, 64),
        ...                                                     validation_split=0.2,
        ...                                                     subset="training", seed=1)
    """
    _pil()
    directory = os.fspath(directory)
    if labels not in ("inferred", None) and not isinstance(labels, (list, tuple)):
        raise ValueError("`labels` argument should be a list/tuple of integer labels, of the "
                         "same size as the number of image files in the target directory, "
                         "or 'inferred' or None.")
    if label_mode not in ("int", "categorical", "binary", None):
        raise ValueError('`label_mode` argument must be one of "int", "categorical", '
                         f'"binary", or None. Received: label_mode={label_mode}')
    channels = {"rgb": 3, "rgba": 4, "grayscale": 1}.get(color_mode)
    if channels is None:
        raise ValueError('`color_mode` must be one of {"rgb", "rgba", "grayscale"}. '
                         f"Received: color_mode={color_mode}")
    if labels == "inferred":
        found = sorted(d for d in os.listdir(directory)
                       if os.path.isdir(os.path.join(directory, d)))
        if class_names is not None and sorted(class_names) != sorted(found) and \
                set(class_names) - set(found):
            raise ValueError(f"The `class_names` passed did not match the names of the "
                             f"subdirectories of the target directory. Expected: {found}, "
                             f"but received: {class_names}")
        class_names = list(class_names) if class_names is not None else found
        paths, label_list = [], []
        for index, name in enumerate(class_names):
            for root, _, files in sorted(os.walk(os.path.join(directory, name),
                                                 followlinks=follow_links)):
                for f in sorted(files):
                    if f.lower().endswith(_IMAGE_EXTENSIONS):
                        paths.append(os.path.join(root, f))
                        label_list.append(index)
    else:
        paths = [os.path.join(root, f) for root, _, files in sorted(os.walk(
            directory, followlinks=follow_links)) for f in sorted(files)
                 if f.lower().endswith(_IMAGE_EXTENSIONS)]
        label_list = list(labels) if labels is not None else None
        if label_list is not None and len(label_list) != len(paths):
            raise ValueError(f"Expected the lengths of `labels` to match the number of files in "
                             f"the target directory. len(labels) is {len(label_list)} while we "
                             f"found {len(paths)} files in directory {directory}.")
        class_names = class_names or (sorted({str(v) for v in label_list})
                                      if label_list is not None else None)
    if label_mode == "binary" and class_names is not None and len(class_names) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 '
                         f"class_names. Received: class_names={class_names}")
    order = np.arange(len(paths))
    if shuffle or validation_split:
        np.random.default_rng(seed if seed is not None else 1337).shuffle(order)
    if validation_split:
        if subset not in ("training", "validation"):
            raise ValueError('`subset` must be "training" or "validation" with '
                             f"validation_split; received subset={subset}")
        cut = len(order) - int(validation_split * len(order))
        order = order[:cut] if subset == "training" else order[cut:]
    if verbose:
        print(f"Found {len(paths)} files belonging to "
              f"{len(class_names) if class_names else 0} classes.")
    images = np.stack([img_to_array(load_img(paths[i], color_mode=color_mode,
                                             target_size=tuple(image_size),
                                             interpolation=interpolation,
                                             keep_aspect_ratio=crop_to_aspect_ratio))
                       for i in order]) if len(order) else \
        np.zeros((0,) + tuple(image_size) + (channels,), np.float32)
    if label_mode is None or label_list is None:
        dataset = Dataset.from_tensor_slices(images)
    else:
        y = np.asarray(label_list, np.int32)[order]
        if label_mode == "categorical":
            y = np.eye(len(class_names), dtype=np.float32)[y]
        elif label_mode == "binary":
            y = y.astype(np.float32)[:, None]
        dataset = Dataset.from_tensor_slices((images, y))
    dataset = dataset.batch(batch_size) if batch_size is not None else dataset
    dataset.class_names = class_names
    dataset.file_paths = [paths[i] for i in order]
    return dataset
