"""tf.keras 2's image pipeline: `ImageDataGenerator` with its random augmentations,
`flow` (arrays) and `flow_from_directory` (one folder per class), and the image file helpers
(`load_img`, `img_to_array`, `array_to_img`, `save_img`), as `keras.preprocessing.image`.

Owns: augmentation on the host in numpy (affine warps with bilinear sampling and Keras's fill
modes, flips, channel and brightness shifts), per-sample and dataset standardization, and the
iterators, which are `keras.utils.PyDataset`s (tf.keras 2's `Sequence`), so `fit` takes them
directly and `next(iterator)` gives batches forever, as tf.keras 2's do.
Invariants: batches are float32 (or the generator's dtype), channels last unless
data_format="channels_first"; randomness comes from numpy's global generator (seeded by
`seed=`), as tf.keras 2's.
"""
import math
import os
import warnings

import numpy as np

from .models.data_adapter import PyDataset
from .graph.properties import read_only

__all__ = ["ImageDataGenerator", "Iterator", "NumpyArrayIterator", "DirectoryIterator",
           "apply_affine_transform", "load_img", "img_to_array", "array_to_img", "save_img"]

_IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".tif", ".tiff", ".gif")
_FILL_MODES = ("nearest", "constant", "reflect", "wrap")


# ------------------------------------------------------------------ files

def _pil():
    try:
        from PIL import Image  # noqa: PLC0415 -- optional: only image files need Pillow
    except ImportError as e:
        raise ImportError("Loading and saving images needs Pillow: pip install pillow") from e
    return Image


def load_img(path, color_mode="rgb", target_size=None, interpolation="nearest",
             keep_aspect_ratio=False):
    """A PIL image from `path`, converted to `color_mode` ("rgb", "rgba", "grayscale") and
    resized to `target_size` (height, width) if given."""
    image_module = _pil()
    img = image_module.open(path)
    mode = {"grayscale": "L", "rgb": "RGB", "rgba": "RGBA"}.get(color_mode)
    if mode is None:
        raise ValueError(f'color_mode must be "grayscale", "rgb" or "rgba", got {color_mode!r}')
    if img.mode != mode:
        img = img.convert(mode)
    if target_size is not None:
        size = (int(target_size[1]), int(target_size[0]))
        if img.size != size:
            methods = {"nearest": image_module.NEAREST, "bilinear": image_module.BILINEAR,
                       "bicubic": image_module.BICUBIC, "lanczos": image_module.LANCZOS,
                       "box": image_module.BOX, "hamming": image_module.HAMMING}
            if interpolation not in methods:
                raise ValueError(f"interpolation must be one of {sorted(methods)}, got "
                                 f"{interpolation!r}")
            img = img.resize(size, methods[interpolation])
    return img


def img_to_array(img, data_format=None, dtype="float32"):
    """The image as an array (height, width, channels), or channels first."""
    x = np.asarray(img, dtype=dtype)
    if x.ndim == 2:
        x = x[:, :, None]
    if x.ndim != 3:
        raise ValueError(f"Unsupported image shape {x.shape}")
    return x.transpose(2, 0, 1) if data_format == "channels_first" else x


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A PIL image from a (height, width, channels) array (rescaled to 0..255 if `scale`)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(f"Expected an image array of rank 3, got shape {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        top = np.max(x)
        if top != 0:
            x = x / top * 255.0
    channels = x.shape[2]
    mode = {1: "L", 3: "RGB", 4: "RGBA"}.get(channels)
    if mode is None:
        raise ValueError(f"Unsupported channel number: {channels}")
    pixels = np.clip(x, 0, 255).astype(np.uint8)
    return _pil().fromarray(pixels[:, :, 0] if channels == 1 else pixels, mode)


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Saves an image array to `path`."""
    array_to_img(x, data_format, scale).save(path, format=file_format, **kwargs)


# ------------------------------------------------------------------ transforms

def _sample_index(index, size, fill_mode):
    """Integer indices mapped into [0, size): mirrored for "reflect", else clamped."""
    if fill_mode == "reflect":       # d c b a | a b c d | d c b a
        period = 2 * size
        index = np.mod(index, period)
        return np.where(index >= size, period - 1 - index, index)
    return np.clip(index, 0, size - 1)


def _affine_channel(image, matrix, offset, fill_mode, cval):
    """Output pixel (i, j) reads input point matrix @ (i, j) + offset, bilinearly, beyond the
    edges as scipy.ndimage's modes (which tf.keras 2 uses): "nearest" the edge value,
    "reflect" mirrored (edge repeated), "wrap" periodic with the ends overlapping, "constant"
    cval for points outside the image (no blending across the edge)."""
    rows, cols = image.shape
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    src_i = matrix[0, 0] * i + matrix[0, 1] * j + offset[0]
    src_j = matrix[1, 0] * i + matrix[1, 1] * j + offset[1]
    inside = None
    if fill_mode == "constant":
        tol = 1e-9
        inside = (src_i >= -tol) & (src_i <= rows - 1 + tol) & \
            (src_j >= -tol) & (src_j <= cols - 1 + tol)
    elif fill_mode == "wrap":
        src_i = np.mod(src_i, max(rows - 1, 1))
        src_j = np.mod(src_j, max(cols - 1, 1))
    if fill_mode in ("nearest", "constant", "wrap"):
        src_i = np.clip(src_i, 0, rows - 1)
        src_j = np.clip(src_j, 0, cols - 1)
    i0, j0 = np.floor(src_i).astype(np.int64), np.floor(src_j).astype(np.int64)
    fi, fj = src_i - i0, src_j - j0
    out = np.zeros(image.shape, dtype=np.float64)
    for di, wi in ((0, 1 - fi), (1, fi)):
        for dj, wj in ((0, 1 - fj), (1, fj)):
            ii = _sample_index(i0 + di, rows, fill_mode)
            jj = _sample_index(j0 + dj, cols, fill_mode)
            out += wi * wj * image[ii, jj]
    return out if inside is None else np.where(inside, out, cval)


def apply_affine_transform(x, theta=0, tx=0, ty=0, shear=0, zx=1, zy=1, row_axis=1, col_axis=2,
                           channel_axis=0, fill_mode="nearest", cval=0.0, order=1):
    """Rotates (theta degrees), shifts (tx rows, ty columns), shears (degrees) and zooms one
    image about its center, as tf.keras 2's function (bilinear sampling; `order` 1 only).

    Example:
        >>> img = np.arange(9.0).reshape(3, 3, 1)
        >>> np.round(apply_affine_transform(img, 180, row_axis=0, col_axis=1, channel_axis=2), 6)[..., 0]
        array([[8., 7., 6.],
               [5., 4., 3.],
               [2., 1., 0.]])
    """
    if fill_mode not in _FILL_MODES:
        raise ValueError(f"fill_mode must be one of {_FILL_MODES}, got {fill_mode!r}")
    if order not in (0, 1):
        raise ValueError(f"apply_affine_transform supports order 0 or 1, got {order}")
    x = np.asarray(x)
    if x.ndim != 3 or sorted((row_axis, col_axis, channel_axis)) != [0, 1, 2]:
        raise ValueError("Input arrays must be multi-channel 2D images with distinct row, column "
                         f"and channel axes; got shape {x.shape}")
    matrix = np.eye(3)
    if theta:
        t = np.deg2rad(theta)
        matrix = matrix @ np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0],
                                    [0, 0, 1]])
    if tx or ty:
        matrix = matrix @ np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]])
    if shear:
        s = np.deg2rad(shear)
        matrix = matrix @ np.array([[1, -np.sin(s), 0], [0, np.cos(s), 0], [0, 0, 1]])
    if zx != 1 or zy != 1:
        matrix = matrix @ np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]])
    if np.allclose(matrix, np.eye(3)):
        return x
    h, w = x.shape[row_axis], x.shape[col_axis]
    o_x, o_y = h / 2 - 0.5, w / 2 - 0.5
    matrix = np.array([[1, 0, o_x], [0, 1, o_y], [0, 0, 1]]) @ matrix @ \
        np.array([[1, 0, -o_x], [0, 1, -o_y], [0, 0, 1]])
    if col_axis > row_axis:  # tf.keras 2 permutes the (x, y) matrix onto (row, col) indexing
        matrix[:, [0, 1]] = matrix[:, [1, 0]]
        matrix[[0, 1]] = matrix[[1, 0]]
    channels_first = np.moveaxis(x, channel_axis, 0)
    sample = _affine_channel if order == 1 else _nearest_channel
    out = np.stack([sample(c.astype(np.float64), matrix[:2, :2], matrix[:2, 2], fill_mode, cval)
                    for c in channels_first])
    return np.moveaxis(out, 0, channel_axis).astype(x.dtype if x.dtype.kind == "f" else
                                                     np.float32)


def _nearest_channel(image, matrix, offset, fill_mode, cval):
    rows, cols = image.shape
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    src_i = np.floor(matrix[0, 0] * i + matrix[0, 1] * j + offset[0] + 0.5).astype(np.int64)
    src_j = np.floor(matrix[1, 0] * i + matrix[1, 1] * j + offset[1] + 0.5).astype(np.int64)
    outside = (src_i < 0) | (src_i >= rows) | (src_j < 0) | (src_j >= cols)
    if fill_mode == "wrap":
        src_i, src_j = np.mod(src_i, max(rows - 1, 1)), np.mod(src_j, max(cols - 1, 1))
    out = image[_sample_index(src_i, rows, fill_mode), _sample_index(src_j, cols, fill_mode)]
    return np.where(outside, cval, out) if fill_mode == "constant" else out


# ------------------------------------------------------------------ the generator

class ImageDataGenerator:
    """Batches of augmented images (tf.keras 2's `ImageDataGenerator`).

    Args: as tf.keras 2's: featurewise_center, samplewise_center,
        featurewise_std_normalization, samplewise_std_normalization, rotation_range (degrees),
        width_shift_range / height_shift_range (fraction of the size if < 1, else pixels; a
        list: choices), brightness_range (two factors), shear_range (degrees), zoom_range
        (a float z: [1 - z, 1 + z], or two bounds), channel_shift_range, fill_mode ("nearest",
        "constant", "reflect", "wrap"), cval, horizontal_flip, vertical_flip, rescale,
        preprocessing_function, data_format, validation_split, interpolation_order, dtype.

    Raises:
        ValueError: for zca_whitening (not supported), a bad fill_mode, zoom_range or
            validation_split.

    Example:
        >>> gen = ImageDataGenerator(rescale=1 / 255, horizontal_flip=True)
        >>> x_batch, y_batch = next(gen.flow(np.ones((8, 4, 4, 3)), np.arange(8), batch_size=4))
        >>> x_batch.shape
        (4, 4, 4, 3)
    """

    def __init__(self, featurewise_center=False, samplewise_center=False,
                 featurewise_std_normalization=False, samplewise_std_normalization=False,
                 zca_whitening=False, zca_epsilon=1e-6, rotation_range=0, width_shift_range=0.0,
                 height_shift_range=0.0, brightness_range=None, shear_range=0.0, zoom_range=0.0,
                 channel_shift_range=0.0, fill_mode="nearest", cval=0.0, horizontal_flip=False,
                 vertical_flip=False, rescale=None, preprocessing_function=None,
                 data_format=None, validation_split=0.0, interpolation_order=1, dtype=None):
        if zca_whitening:
            raise ValueError("ImageDataGenerator(zca_whitening=True) is not supported by trainlib")
        if fill_mode not in _FILL_MODES:
            raise ValueError(f"fill_mode must be one of {_FILL_MODES}, got {fill_mode!r}")
        if not 0 <= validation_split < 1:
            raise ValueError(f"validation_split must be in [0, 1), got {validation_split}")
        data_format = data_format or "channels_last"
        if data_format not in ("channels_last", "channels_first"):
            raise ValueError(f"data_format must be channels_last or channels_first, got "
                             f"{data_format!r}")
        if np.isscalar(zoom_range):
            zoom_range = [1 - zoom_range, 1 + zoom_range]
        elif len(zoom_range) == 2:
            zoom_range = [zoom_range[0], zoom_range[1]]
        else:
            raise ValueError(f"zoom_range must be a float or a pair, got {zoom_range!r}")
        if brightness_range is not None and len(brightness_range) != 2:
            raise ValueError(f"brightness_range must be a pair, got {brightness_range!r}")
        self.featurewise_center = featurewise_center
        self.samplewise_center = samplewise_center
        self.featurewise_std_normalization = featurewise_std_normalization
        self.samplewise_std_normalization = samplewise_std_normalization
        self.zca_whitening = False
        self.rotation_range = rotation_range
        self.width_shift_range = width_shift_range
        self.height_shift_range = height_shift_range
        self.brightness_range = brightness_range
        self.shear_range = shear_range
        self.zoom_range = zoom_range
        self.channel_shift_range = channel_shift_range
        self.fill_mode, self.cval = fill_mode, cval
        self.horizontal_flip, self.vertical_flip = horizontal_flip, vertical_flip
        self.rescale = rescale
        self.preprocessing_function = preprocessing_function
        self.data_format = data_format
        self.channel_axis, self.row_axis, self.col_axis = (3, 1, 2) \
            if data_format == "channels_last" else (1, 2, 3)
        self._validation_split = validation_split
        self.interpolation_order = interpolation_order
        self.dtype = dtype or "float32"
        self.mean = self.std = None

    def flow(self, x, y=None, batch_size=32, shuffle=True, sample_weight=None, seed=None,
             save_to_dir=None, save_prefix="", save_format="png", ignore_class_split=False,
             subset=None):
        """An iterator of (augmented x, y[, sample_weight]) batches over the arrays."""
        return NumpyArrayIterator(x, y, self, batch_size=batch_size, shuffle=shuffle,
                                  sample_weight=sample_weight, seed=seed, subset=subset)

    def flow_from_directory(self, directory, target_size=(256, 256), color_mode="rgb",
                            classes=None, class_mode="categorical", batch_size=32, shuffle=True,
                            seed=None, save_to_dir=None, save_prefix="", save_format="png",
                            follow_links=False, subset=None, interpolation="nearest",
                            keep_aspect_ratio=False):
        """An iterator over the images of `directory/<class>/...` (classes in sorted order)."""
        return DirectoryIterator(directory, self, target_size=target_size, color_mode=color_mode,
                                 classes=classes, class_mode=class_mode, batch_size=batch_size,
                                 shuffle=shuffle, seed=seed, follow_links=follow_links,
                                 subset=subset, interpolation=interpolation)

    def standardize(self, x):
        """preprocessing_function, rescale, then the sample- and feature-wise normalizations."""
        if self.preprocessing_function:
            x = self.preprocessing_function(x)
        if self.rescale:
            x = x * self.rescale
        if self.samplewise_center:
            x = x - np.mean(x, keepdims=True)
        if self.samplewise_std_normalization:
            x = x / (np.std(x, keepdims=True) + 1e-6)
        for flag, stat, what in ((self.featurewise_center, self.mean, "featurewise_center"),
                                 (self.featurewise_std_normalization, self.std,
                                  "featurewise_std_normalization")):
            if flag and stat is None:
                warnings.warn(f"This ImageDataGenerator specifies `{what}`, but it hasn't been "
                              "fit on any training data. Fit it first by calling "
                              "`.fit(numpy_data)`.", stacklevel=2)
        if self.featurewise_center and self.mean is not None:
            x = x - self.mean
        if self.featurewise_std_normalization and self.std is not None:
            x = x / (self.std + 1e-6)
        return x

    def get_random_transform(self, img_shape, seed=None):
        """Random parameters of one augmentation (a dict for `apply_transform`)."""
        if seed is not None:
            np.random.seed(seed)
        rows, cols = img_shape[self.row_axis - 1], img_shape[self.col_axis - 1]
        theta = np.random.uniform(-self.rotation_range, self.rotation_range) \
            if self.rotation_range else 0
        tx = _shift(self.height_shift_range, rows)
        ty = _shift(self.width_shift_range, cols)
        shear = np.random.uniform(-self.shear_range, self.shear_range) if self.shear_range else 0
        if self.zoom_range[0] == 1 and self.zoom_range[1] == 1:
            zx = zy = 1
        else:
            zx, zy = np.random.uniform(self.zoom_range[0], self.zoom_range[1], 2)
        return {"theta": theta, "tx": tx, "ty": ty, "shear": shear, "zx": zx, "zy": zy,
                "flip_horizontal": bool(np.random.random() < 0.5) and self.horizontal_flip,
                "flip_vertical": bool(np.random.random() < 0.5) and self.vertical_flip,
                "channel_shift_intensity": np.random.uniform(-self.channel_shift_range,
                                                             self.channel_shift_range)
                if self.channel_shift_range else None,
                "brightness": np.random.uniform(*self.brightness_range)
                if self.brightness_range is not None else None}

    def apply_transform(self, x, transform_parameters):
        """One image (no batch axis) transformed by the given parameters."""
        p = transform_parameters
        rows, cols, channels = self.row_axis - 1, self.col_axis - 1, self.channel_axis - 1
        x = apply_affine_transform(x, p.get("theta", 0), p.get("tx", 0), p.get("ty", 0),
                                   p.get("shear", 0), p.get("zx", 1), p.get("zy", 1),
                                   row_axis=rows, col_axis=cols, channel_axis=channels,
                                   fill_mode=self.fill_mode, cval=self.cval,
                                   order=self.interpolation_order)
        if p.get("channel_shift_intensity") is not None:
            low, high = np.min(x), np.max(x)
            x = np.clip(x + p["channel_shift_intensity"], low, high)
        if p.get("flip_horizontal"):
            x = np.flip(x, cols)
        if p.get("flip_vertical"):
            x = np.flip(x, rows)
        if p.get("brightness") is not None:
            low, high = np.min(x), np.max(x)
            x = np.clip(x * p["brightness"], min(low, 0), max(high * p["brightness"], high))
        return x

    def random_transform(self, x, seed=None):
        """One image randomly augmented."""
        return self.apply_transform(x, self.get_random_transform(x.shape, seed))

    def fit(self, x, augment=False, rounds=1, seed=None):
        """Computes the per-channel mean and std of the (rescaled, optionally augmented) data,
        used by the feature-wise normalizations."""
        x = np.array(x, dtype=self.dtype)
        if x.ndim != 4:
            raise ValueError(f"Input to .fit() should have rank 4, got shape {x.shape}")
        if seed is not None:
            np.random.seed(seed)
        if self.rescale:
            x *= self.rescale
        if augment:
            x = np.concatenate([np.stack([self.random_transform(img) for img in x])
                                for _ in range(rounds)])
        axes = (0, self.row_axis, self.col_axis)
        shape = [1, 1, 1]
        shape[self.channel_axis - 1] = x.shape[self.channel_axis]
        if self.featurewise_center:
            self.mean = np.mean(x, axis=axes).reshape(shape)
            x = x - self.mean
        if self.featurewise_std_normalization:
            self.std = np.std(x, axis=axes).reshape(shape)


def _shift(spec, size):
    """A random shift as tf.keras 2 draws it: an int n or a list gives a choice of
    `range(n)` / the list times +-1, a float a uniform draw; below 1, a fraction of `size`."""
    if not spec:
        return 0
    try:
        value = np.random.choice(spec) * np.random.choice([-1, 1])
    except ValueError:  # a float
        value = np.random.uniform(-spec, spec)
    return value * size if np.max(spec) < 1 else value


# ------------------------------------------------------------------ iterators

class Iterator(PyDataset):
    """Batches by index over n samples, reshuffled each epoch; also an endless iterator
    (`next(it)`), as tf.keras 2's `Iterator`."""

    def __init__(self, n, batch_size, shuffle, seed):
        super().__init__()
        self.n, self.batch_size, self.shuffle, self.seed = n, int(batch_size), shuffle, seed
        self.batch_index = 0
        self.total_batches_seen = 0
        self.index_array = None
        self._position = 0

    def _set_index_array(self):
        self.index_array = np.arange(self.n)
        if self.shuffle:
            if self.seed is not None:
                np.random.seed(self.seed + self.total_batches_seen)
            self.index_array = np.random.permutation(self.n)

    def __len__(self):
        return math.ceil(self.n / self.batch_size)

    def __getitem__(self, index):
        if index >= len(self):
            raise ValueError(f"Asked to retrieve element {index}, but the Sequence has length "
                             f"{len(self)}")
        if self.index_array is None:
            self._set_index_array()
        self.total_batches_seen += 1
        return self._get_batches_of_transformed_samples(
            self.index_array[self.batch_size * index:self.batch_size * (index + 1)])

    def on_epoch_end(self):
        self._set_index_array()

    def reset(self):
        self.batch_index = 0
        self._position = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self._position >= len(self):
            self._position = 0
            self._set_index_array()
        self._position += 1
        return self[self._position - 1]

    next = __next__

    def _get_batches_of_transformed_samples(self, index_array):
        raise NotImplementedError


class NumpyArrayIterator(Iterator):
    """Augmented batches of in-memory images (what `ImageDataGenerator.flow` returns)."""

    def __init__(self, x, y, image_data_generator, batch_size=32, shuffle=False,
                 sample_weight=None, seed=None, subset=None, dtype=None):
        x = np.asarray(x, dtype=dtype or image_data_generator.dtype)
        if x.ndim != 4:
            raise ValueError(f"Input data in NumpyArrayIterator should have rank 4, got shape "
                             f"{x.shape}")
        if y is not None and len(x) != len(y):
            raise ValueError(f"x (images) and y (labels) should have the same length, got "
                             f"{len(x)} and {len(y)}")
        split = image_data_generator._validation_split  # noqa: SLF001 -- its own generator
        y = None if y is None else np.asarray(y)
        sample_weight = None if sample_weight is None else np.asarray(sample_weight)
        if subset is not None:
            if subset not in ("training", "validation"):
                raise ValueError(f'subset must be "training" or "validation", got {subset!r}')
            cut = int(len(x) * split)
            part = slice(None, cut) if subset == "validation" else slice(cut, None)
            x = x[part]
            y = None if y is None else y[part]
            sample_weight = None if sample_weight is None else sample_weight[part]
        self.x, self.y, self.sample_weight = x, y, sample_weight
        self.image_data_generator = image_data_generator
        super().__init__(len(x), batch_size, shuffle, seed)

    def _get_batches_of_transformed_samples(self, index_array):
        gen = self.image_data_generator
        batch = np.zeros((len(index_array),) + self.x.shape[1:], dtype=gen.dtype)
        for i, j in enumerate(index_array):
            params = gen.get_random_transform(self.x[j].shape)
            batch[i] = gen.standardize(gen.apply_transform(self.x[j].astype(gen.dtype), params))
        if self.y is None:
            return batch
        out = (batch, self.y[index_array])
        return out + (self.sample_weight[index_array],) if self.sample_weight is not None else out


class DirectoryIterator(Iterator):
    """Batches of images read from `directory/<class name>/<file>` (what
    `ImageDataGenerator.flow_from_directory` returns): `class_indices`, `classes`,
    `filenames`, `samples`, `num_classes` as tf.keras 2's."""

    def __init__(self, directory, image_data_generator, target_size=(256, 256),
                 color_mode="rgb", classes=None, class_mode="categorical", batch_size=32,
                 shuffle=True, seed=None, follow_links=False, subset=None,
                 interpolation="nearest", dtype=None):
        if class_mode not in ("categorical", "binary", "sparse", "input", None):
            raise ValueError(f'class_mode must be "categorical", "binary", "sparse", "input" or '
                             f'None, got {class_mode!r}')
        if color_mode not in ("rgb", "rgba", "grayscale"):
            raise ValueError(f'color_mode must be "rgb", "rgba" or "grayscale", got {color_mode!r}')
        if not os.path.isdir(directory):
            raise ValueError(f"flow_from_directory: {directory!r} is not a directory")
        self.directory, self.image_data_generator = directory, image_data_generator
        self.target_size = tuple(int(v) for v in target_size)
        self.color_mode, self.class_mode, self.interpolation = color_mode, class_mode, interpolation
        self.dtype = dtype or image_data_generator.dtype
        channels = {"rgb": 3, "rgba": 4, "grayscale": 1}[color_mode]
        self.image_shape = self.target_size + (channels,) \
            if image_data_generator.data_format == "channels_last" else (channels,) + self.target_size
        if classes is None:
            classes = sorted(d for d in os.listdir(directory)
                             if os.path.isdir(os.path.join(directory, d)))
        self.class_indices = {name: i for i, name in enumerate(classes)}
        self.num_classes = len(classes)
        split = image_data_generator._validation_split  # noqa: SLF001 -- its own generator
        self.filenames, labels = [], []
        for name in classes:
            files = _image_files(os.path.join(directory, name), follow_links)
            if subset is not None and split:
                cut = int(math.ceil(len(files) * split))  # per class, as tf.keras 2 splits
                files = files[:cut] if subset == "validation" else files[cut:]
            self.filenames.extend(os.path.join(name, f) for f in files)
            labels.extend([self.class_indices[name]] * len(files))
        self.classes = np.asarray(labels, dtype=np.int32)
        self.samples = len(self.filenames)
        print(f"Found {self.samples} images belonging to {self.num_classes} classes.")
        super().__init__(self.samples, batch_size, shuffle, seed)

    @property
    def filepaths(self):
        return [os.path.join(self.directory, f) for f in self.filenames]

    labels = read_only("classes", "The class index of each file (the list `classes` holds).")

    def _get_batches_of_transformed_samples(self, index_array):
        gen = self.image_data_generator
        batch = np.zeros((len(index_array),) + self.image_shape, dtype=self.dtype)
        for i, j in enumerate(index_array):
            img = load_img(os.path.join(self.directory, self.filenames[j]), self.color_mode,
                           self.target_size, self.interpolation)
            x = img_to_array(img, gen.data_format, self.dtype)
            batch[i] = gen.standardize(gen.apply_transform(x, gen.get_random_transform(x.shape)))
        labels = self.classes[index_array]
        if self.class_mode == "input":
            return batch, batch.copy()
        if self.class_mode == "sparse":
            return batch, labels.astype(self.dtype)
        if self.class_mode == "binary":
            return batch, labels.astype(self.dtype)
        if self.class_mode == "categorical":
            return batch, np.eye(self.num_classes, dtype=self.dtype)[labels]
        return batch


def _image_files(folder, follow_links):
    found = []
    for root, _, files in sorted(os.walk(folder, followlinks=follow_links)):
        for f in sorted(files):
            if f.lower().endswith(_IMAGE_EXTENSIONS):
                found.append(os.path.relpath(os.path.join(root, f), folder))
    return found
