"""Keras 3's dataset builders over `tl.data.Dataset`: `timeseries_dataset_from_array`,
`image_dataset_from_directory`, `text_dataset_from_directory` and `split_dataset`.

Owns: the windows of a time series (start positions, strides, sampling rate, targets) as
Keras computes them; indexing a folder of images or texts in Keras's order (classes = sorted
sub-folders, files sorted per folder, then one `np.random.RandomState(seed)` shuffle of the
paths and the same shuffle of the labels, so a given seed selects the same files and the same
validation split as Keras); images decoded lazily with Pillow (an optional extra: without it
a clear ImportError names the install) and resized by `tl.image.resize` (TensorFlow's
kernels, as Keras on TensorFlow); text files read lazily as string elements; splitting a
dataset in two as Keras's sizes rules say.
"""
import os
import random

import numpy as np

from .data import Dataset
from .graph import dtypes
from .graph import tensor as tensor_lib
from .graph import nest
from .graph.ops import image as image_ops

__all__ = ["timeseries_dataset_from_array", "image_dataset_from_directory",
           "text_dataset_from_directory", "split_dataset"]

IMAGE_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
_INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian",
                   "mitchellcubic")
_CHANNELS = {"rgb": 3, "rgba": 4, "grayscale": 1}


def _check_format(format):  # noqa: A002 -- Keras's argument name
    """Keras's `format` argument: "tf" gives a tl.data.Dataset; "grain" is not available."""
    if format not in ("tf", "grain"):
        raise ValueError(f'`format` should be either "tf" or "grain". Received: format={format}')
    if format == "grain":
        raise NotImplementedError('format="grain" is not supported: trainlib returns a '
                                  'tl.data.Dataset (format="tf")')


def _check_range(name, value, length, low=0, strict_low=False):
    if strict_low and value <= low or not strict_low and value < low:
        raise ValueError(f"`{name}` must be {'higher than' if strict_low else 'at least'} {low}. "
                         f"Received: {name}={value}")
    if value >= length:
        raise ValueError(f"`{name}` must be lower than the length of the data. Received: "
                         f"{name}={value}, for data of length {length}")


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1,
                                  sampling_rate=1, batch_size=128, shuffle=False, seed=None,
                                  start_index=None, end_index=None, format="tf"):
    """Sliding windows over `data` as a Dataset of batches, as Keras 3's.

    Window i holds `data[start_index + p_i + k * sampling_rate]` for k < sequence_length, with
    start positions p_i = 0, sequence_stride, 2 * sequence_stride, ...; its target (when
    `targets` is given) is `targets[start_index + p_i]`. `shuffle` permutes the windows with
    `np.random.RandomState(seed)` (as Keras's first shuffle; Keras then shuffles again in a
    tf.data buffer, whose order is not reproduced).

    Example:
        >>> ds = keras.utils.timeseries_dataset_from_array(np.arange(10), None, 3,
        ...                                                 batch_size=2)
        >>> next(iter(ds)).numpy().tolist()
        [[0, 1, 2], [1, 2, 3]]
    """
    _check_format(format)
    length = len(data)
    if start_index:
        _check_range("start_index", start_index, length)
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError("`end_index` must be higher than `start_index`. Received: "
                             f"start_index={start_index}, and end_index={end_index}")
        _check_range("end_index", end_index, length, 0, strict_low=True)
    _check_range("sampling_rate", sampling_rate, length, 0, strict_low=True)
    _check_range("sequence_stride", sequence_stride, length, 0, strict_low=True)
    start = start_index or 0
    end = length if end_index is None else end_index
    num_seqs = end - start - (sequence_length - 1) * sampling_rate
    if targets is not None:
        num_seqs = min(num_seqs, len(targets))
    positions = np.arange(0, max(num_seqs, 0), sequence_stride,
                          dtype="int32" if num_seqs < 2 ** 31 - 1 else "int64")
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(positions)
    values = np.asarray(data)[start:end]
    offsets = np.arange(sequence_length) * sampling_rate
    windows = values[positions[:, None] + offsets] if len(positions) else \
        np.zeros((0, sequence_length) + values.shape[1:], values.dtype)
    element = windows
    if targets is not None:
        element = (windows, np.asarray(targets)[start:end][positions])
    ds = Dataset.from_tensor_slices(element)
    if batch_size is not None:
        if shuffle:
            ds = ds.shuffle(batch_size * 8, seed=seed)
        return ds.batch(batch_size)
    return ds.shuffle(1024, seed=seed) if shuffle else ds


def _index_directory(directory, labels, class_names, shuffle, seed, follow_links, verbose,
                     formats=IMAGE_FORMATS):
    """(file paths, labels or None, class names) in Keras's order."""
    if labels == "inferred":
        subdirs = [d for d in sorted(os.listdir(directory))
                   if os.path.isdir(os.path.join(directory, d)) and not d.startswith(".")]
        if class_names is not None:
            if not set(class_names).issubset(subdirs):
                raise ValueError(
                    "The `class_names` passed did not match the names of the subdirectories of "
                    f"the target directory. Expected: {subdirs} (or a subset of it), but "
                    f"received: class_names={class_names}")
            subdirs = list(class_names)
    else:
        subdirs = [""]
    names, found = [], []
    for index, subdir in enumerate(subdirs):
        folder = os.path.join(directory, subdir)
        walk = sorted(os.walk(folder, followlinks=follow_links), key=lambda w: w[0])
        for root, _, files in walk:
            for fname in sorted(files):
                if fname.lower().endswith(formats):
                    names.append(os.path.join(os.path.basename(folder),
                                              os.path.relpath(os.path.join(root, fname), folder)))
                    found.append(index)
    if labels == "inferred":
        labels = np.asarray(found, dtype="int32")
        class_names = subdirs
    elif labels is None:
        class_names = None
    else:
        if len(labels) != len(names):
            raise ValueError(
                "Expected the lengths of `labels` to match the number of files in the target "
                f"directory. len(labels) is {len(labels)} while we found {len(names)} files in "
                f"directory {directory}.")
        class_names = [str(label) for label in sorted(set(labels))]
    if verbose:
        print(f"Found {len(names)} files." if labels is None else
              f"Found {len(names)} files belonging to {len(class_names)} classes.")
    paths = [os.path.join(directory, n) for n in names]
    if shuffle:
        np.random.RandomState(seed).shuffle(paths)
        if labels is not None:
            labels = np.array(labels)  # a user's list stays untouched
            np.random.RandomState(seed).shuffle(labels)
    return paths, labels, class_names


def _split(paths, labels, validation_split, subset):
    if not validation_split:
        return paths, labels
    count = int(validation_split * len(paths))
    if subset == "training":
        print(f"Using {len(paths) - count} files for training.")
        part = slice(None, -count) if count else slice(None)
    elif subset == "validation":
        print(f"Using {count} files for validation.")
        part = slice(-count, None) if count else slice(0, 0)
    else:
        raise ValueError(f'`subset` must be either "training" or "validation", received: {subset}')
    return paths[part], (None if labels is None else labels[part])


def _check_labels(labels, label_mode, class_names, kind):
    """Keras's checks of `labels`/`label_mode`/`class_names`; (labels, label_mode), both None
    when either is."""
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError(
                "`labels` argument should be a list/tuple of integer labels, of the same size as "
                f"the number of {kind} files in the target directory. If you wish to infer the "
                'labels from the subdirectory names in the target directory, pass `labels="infer'
                'red"`. If you wish to get a dataset that only contains the files (no labels), '
                f"pass `labels=None`. Received: labels={labels}")
        if class_names:
            raise ValueError('You can only pass `class_names` if `labels="inferred"`. Received: '
                             f"labels={labels}, and class_names={class_names}")
    if label_mode not in ("int", "categorical", "binary", None):
        raise ValueError('`label_mode` argument must be one of "int", "categorical", "binary", '
                         f"or None. Received: label_mode={label_mode}")
    if labels is None or label_mode is None:
        return None, None
    return labels, label_mode


def _check_split(validation_split, subset, shuffle, seed):
    if validation_split and not 0 < validation_split < 1:
        raise ValueError(f"`validation_split` must be between 0 and 1, received: "
                         f"{validation_split}")
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError("If `subset` is set, `validation_split` must be set, and inversely.")
    if subset not in ("training", "validation", "both", None):
        raise ValueError('`subset` must be either "training", "validation" or "both", '
                         f"received: {subset}")
    if validation_split and shuffle and seed is None:
        raise ValueError(
            "If using `validation_split` and shuffling the data, you must provide a `seed` "
            "argument, to make sure that there is no overlap between the training and "
            "validation subset.")


def _targets(labels, label_mode, num_classes):
    """Labels as Keras encodes them: int32, one-hot float32, or float32 [n, 1]; None."""
    if label_mode == "categorical":
        return np.eye(num_classes, dtype=np.float32)[labels]
    if label_mode == "binary":
        return np.asarray(labels, np.float32)[:, None]
    if label_mode == "int":
        return np.asarray(labels, np.int32)
    return None


def _lazy_dataset(paths, targets, element_spec, load, shuffled, batch_size, seed):
    """A Dataset reading `load(path)` (with its target) when iterated, shuffled in a buffer and
    batched as Keras's builders do."""
    spec = element_spec if targets is None else \
        (element_spec, tensor_lib.TensorSpec(targets.shape[1:], dtypes.as_dtype(targets.dtype)))

    def make():
        for i, path in enumerate(paths):
            yield load(path) if targets is None else (load(path), targets[i])
    ds = Dataset(make, len(paths), spec)
    if shuffled:
        ds = ds.shuffle(batch_size * 8 if batch_size is not None else 1024, seed=seed)
    return ds.batch(batch_size) if batch_size is not None else ds


def _pil_image():
    try:
        from PIL import Image  # noqa: PLC0415 -- Pillow is an optional extra
    except ImportError as e:
        raise ImportError("image_dataset_from_directory needs Pillow to decode image files, "
                          "which is not installed: pip install pillow (or trainlib[images])"
                          ) from e
    return Image


def _decode(path, color_mode):
    """A file's pixels as uint8 [height, width, channels] in `color_mode`."""
    image = _pil_image().open(path)
    image.seek(0)  # the first frame of an animation, as expand_animations=False
    mode = {"rgb": "RGB", "rgba": "RGBA", "grayscale": "L"}[color_mode]
    pixels = np.asarray(image.convert(mode), dtype=np.uint8)
    return pixels[..., None] if pixels.ndim == 2 else pixels


def _center_crop(pixels, size):
    """The largest centred box with `size`'s aspect ratio, as Keras's smart_resize crops."""
    height, width = pixels.shape[:2]
    crop_h = min(height, int(float(width * size[0]) / size[1]))
    crop_w = min(width, int(float(height * size[1]) / size[0]))
    top, left = int(float(height - crop_h) / 2), int(float(width - crop_w) / 2)
    return pixels[top:top + crop_h, left:left + crop_w]


def _load_image(path, size, color_mode, interpolation, crop, pad, channels_first):
    pixels = _decode(path, color_mode)
    if crop:
        pixels = _center_crop(pixels, size)
    if pad:
        out = image_ops.resize_with_pad(pixels, size[0], size[1], method=interpolation)
    else:
        out = image_ops.resize(pixels, size, method=interpolation)
    out = np.asarray(out.numpy())
    return out.transpose(2, 0, 1) if channels_first else out


def image_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                 class_names=None, color_mode="rgb", batch_size=32,
                                 image_size=(256, 256), shuffle=True, seed=None,
                                 validation_split=None, subset=None, interpolation="bilinear",
                                 follow_links=False, crop_to_aspect_ratio=False,
                                 pad_to_aspect_ratio=False, data_format=None, verbose=True,
                                 format="tf"):
    """A Dataset of (images, labels) batches from `directory/<class>/*.{png,jpg,...}`, as
    Keras 3's.

    Classes are the sorted sub-folders (or `class_names`); labels are "int" (int32),
    "categorical" (one-hot float32), "binary" (float32 [n, 1]) or None. Images are decoded
    when iterated (Pillow) in `color_mode` "rgb", "rgba" or "grayscale" and resized to
    `image_size` with `interpolation` (TensorFlow's resize kernels), float32. The file order,
    the `seed` shuffle and the `validation_split`/`subset` ("training", "validation", "both")
    pick the same files as Keras. The result has `class_names` and `file_paths`.

    Example:
        >>> train, val = keras.utils.image_dataset_from_directory(
        ...     "flowers", validation_split=0.2, subset="both", seed=1, image_size=(64, 64))
    """
    labels, label_mode = _check_labels(labels, label_mode, class_names, "image")
    _check_format(format)
    if color_mode not in _CHANNELS:
        raise ValueError('`color_mode` must be one of {"rgb", "rgba", "grayscale"}. '
                         f"Received: color_mode={color_mode}")
    if isinstance(image_size, int):
        image_size = (image_size, image_size)
    elif not isinstance(image_size, (list, tuple)) or len(image_size) != 2:
        raise ValueError("Invalid `image_size` value. Expected a tuple of 2 integers. "
                         f"Received: image_size={image_size}")
    interpolation = interpolation.lower()
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"Argument `interpolation` should be one of {_INTERPOLATIONS}. "
                         f"Received: interpolation={interpolation}")
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError("Only one of `pad_to_aspect_ratio`, `crop_to_aspect_ratio` can be set "
                         "to `True`.")
    if data_format not in (None, "channels_last", "channels_first"):
        raise ValueError('`data_format` must be "channels_last" or "channels_first", got '
                         f"{data_format!r}")
    _check_split(validation_split, subset, shuffle, seed)
    _pil_image()  # fail now, naming the install, not at the first batch
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, class_names = _index_directory(directory, labels, class_names, shuffle, seed,
                                                  follow_links, verbose)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError('When passing `label_mode="binary"`, there must be exactly 2 '
                         f"class_names. Received: class_names={class_names}")
    size = tuple(int(s) for s in image_size)
    channels = _CHANNELS[color_mode]
    channels_first = data_format == "channels_first"
    shape = (channels,) + size if channels_first else size + (channels,)
    num_classes = len(class_names) if class_names else 0

    def build(part_paths, part_labels, shuffled):
        if not part_paths:
            raise ValueError(f"No images found in directory {directory}. Allowed formats: "
                             f"{IMAGE_FORMATS}")
        part_paths = list(part_paths)
        ds = _lazy_dataset(
            part_paths, _targets(part_labels, label_mode, num_classes),
            tensor_lib.TensorSpec(shape, dtypes.float32),
            lambda path: _load_image(path, size, color_mode, interpolation,
                                     crop_to_aspect_ratio, pad_to_aspect_ratio, channels_first),
            shuffled, batch_size, seed)
        ds.class_names = class_names
        ds.file_paths = part_paths
        return ds

    if subset == "both":
        train = _split(paths, labels, validation_split, "training")
        val = _split(paths, labels, validation_split, "validation")
        return [build(*train, shuffle), build(*val, False)]
    return build(*_split(paths, labels, validation_split, subset), shuffle)


def text_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                class_names=None, batch_size=32, max_length=None, shuffle=True,
                                seed=None, validation_split=None, subset=None, follow_links=False,
                                verbose=True, format="tf"):
    """A Dataset of (texts, labels) batches from `directory/<class>/*.txt`, as Keras 3's.

    Classes are the sorted sub-folders (or `class_names`); labels "int" (int32),
    "categorical", "binary" or None. Each element is a file's bytes as a scalar string (cut
    to `max_length` bytes), read when iterated. The file order, the `seed` shuffle and
    `validation_split`/`subset` ("training", "validation", "both") pick the same files as
    Keras. The result has `class_names`.

    Example:
        >>> train = keras.utils.text_dataset_from_directory("reviews", seed=1,
        ...                                                 validation_split=0.2,
        ...                                                 subset="training")
    """
    labels, label_mode = _check_labels(labels, label_mode, class_names, "text")
    _check_format(format)
    _check_split(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, class_names = _index_directory(directory, labels, class_names, shuffle, seed,
                                                  follow_links, verbose, formats=(".txt",))
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError('When passing `label_mode="binary"`, there must be exactly 2 '
                         f"class_names. Received: class_names={class_names}")
    num_classes = len(class_names) if class_names else 0

    def read(path):
        with open(path, "rb") as f:
            data = f.read()
        out = np.empty((), dtype=object)
        out[()] = data[:max_length] if max_length is not None else data
        return out

    def build(part_paths, part_labels, shuffled):
        if not part_paths:
            raise ValueError(f"No text files found in directory {directory}. Allowed format: "
                             ".txt")
        ds = _lazy_dataset(list(part_paths), _targets(part_labels, label_mode, num_classes),
                           tensor_lib.TensorSpec([], dtypes.string), read, shuffled,
                           batch_size, seed)
        ds.class_names = class_names
        return ds

    if subset == "both":
        return [build(*_split(paths, labels, validation_split, "training"), shuffle),
                build(*_split(paths, labels, validation_split, "validation"), False)]
    return build(*_split(paths, labels, validation_split, subset), shuffle)


def _split_sizes(left_size, right_size, total):
    """(left, right) counts from ints, fractions or None, with Keras's checks."""
    for name, size in (("left_size", left_size), ("right_size", right_size)):
        if size is not None and type(size) not in (int, float):
            raise TypeError(f"Invalid `{name}` Type. Expected: int or float or None, Received: "
                            f"type({name})={type(size)}.")
        if type(size) is int and not 0 < size < total or \
                type(size) is float and not 0 < size < 1:
            raise ValueError(f"`{name}` should be either a positive integer smaller than {total}, "
                             f"or a float within the range `[0, 1]`. Received: {name}={size}")
    if left_size is None and right_size is None:
        raise ValueError("At least one of the `left_size` or `right_size` must be specified. "
                         "Received: left_size=None and right_size=None")
    if type(left_size) is float and type(right_size) is float and left_size + right_size > 1:
        raise ValueError("The sum of `left_size` and `right_size` is greater than 1. It must be "
                         "less than or equal to 1.")
    left = round(left_size * total) if type(left_size) is float else left_size
    right = round(right_size * total) if type(right_size) is float else right_size
    left = total - right if left is None else left
    right = total - left if right is None else right
    if left + right > total:
        raise ValueError(f"The sum of `left_size` and `right_size` should be smaller than the "
                         f"{total}. Received: left_size + right_size = {left + right}and "
                         f"total_length = {total}")
    for split, side in ((left, "left"), (right, "right")):
        if split == 0:
            raise ValueError(f"With `dataset` of length={total}, `left_size`={left} and "
                             f"`right_size`={right}.Resulting {side} side dataset split will be "
                             "empty. Adjust any of the aforementioned parameters")
    return int(left), int(right)


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None):
    """Two Datasets holding the first `left_size` and the last `right_size` elements of
    `dataset` (a `tl.data.Dataset`, or a list/tuple of arrays of one length), as Keras 3's:
    sizes are counts or fractions (the other side defaults to the rest); `shuffle` permutes
    the elements with Python's `random.seed(seed)` first, as Keras; a batched Dataset is split
    by element and both sides are batched again with its batch size.

    Example:
        >>> left, right = keras.utils.split_dataset(np.arange(10), left_size=0.8)
        >>> len(list(left)), len(list(right))
        (8, 2)
    """
    batch_size = getattr(dataset, "_batch_size", None)
    if isinstance(dataset, Dataset):
        elements = []
        for e in dataset.as_numpy_iterator():
            if batch_size is None:
                elements.append(e)
                continue
            leaves = nest.flatten(e)
            elements += [nest.pack_as(e, [leaf[i] for leaf in leaves])
                         for i in range(len(leaves[0]))]
    elif isinstance(dataset, (list, tuple, np.ndarray)):
        arrays = [np.asarray(a) for a in dataset] if isinstance(dataset, (list, tuple)) \
            else [dataset]
        if len({len(a) for a in arrays}) > 1:
            raise ValueError("split_dataset: the arrays of `dataset` must have one length, got "
                             f"{[len(a) for a in arrays]}")
        elements = list(zip(*arrays)) if isinstance(dataset, (list, tuple)) else list(dataset)
    else:
        raise TypeError("The `dataset` argument must be either a `tl.data.Dataset` object, or a "
                        f"list/tuple of arrays. Received: dataset={dataset!r} of type "
                        f"{type(dataset)}")
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(1e6))
        random.seed(seed)
        random.shuffle(elements)
    left, right = _split_sizes(left_size, right_size, len(elements))

    def restack(part):
        columns = zip(*(nest.flatten(e) for e in part))
        return nest.pack_as(part[0], [np.stack(column) for column in columns])
    out = []
    for part in (elements[:left], elements[-right:]):
        ds = Dataset.from_tensor_slices(restack(part))
        out.append(ds.batch(batch_size) if batch_size is not None else ds)
    return tuple(out)
