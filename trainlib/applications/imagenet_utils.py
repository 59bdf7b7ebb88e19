"""Shared pieces of `keras.applications`: input-shape checking, the ImageNet preprocessing
modes ("caffe", "tf", "torch"), `decode_predictions`, and the model assembly every builder
ends with (inputs, `Model`, weights from "imagenet" through `get_file` or from a file path).
"""
import json
import os
import warnings

import numpy as np

from ..backend import is_keras_tensor
from ..downloads import get_file, keras_home
from ..models import Model
from ..models.functional import get_source_inputs
from ..settings import image_data_format

CLASS_INDEX = None
CLASS_INDEX_PATH = ("https://storage.googleapis.com/download.tensorflow.org/"
                    "data/imagenet_class_index.json")
_CAFFE_MEAN = (103.939, 116.779, 123.68)
_TORCH_MEAN, _TORCH_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def fetch(fname, origin, file_hash=None, cache_subdir="models"):
    """`get_file(fname, origin)` into the Keras cache; without network a RuntimeError that
    names the file and the folder to put it in."""
    try:
        return get_file(fname, origin, cache_subdir=cache_subdir, file_hash=file_hash)
    except Exception as e:  # noqa: BLE001 -- any fetch failure becomes the same advice
        folder = os.path.join(os.path.expanduser(os.fspath(keras_home())), cache_subdir)
        raise RuntimeError(
            f"Could not download {fname!r} from {origin} ({e}). Without network access, "
            f"download it elsewhere and put it at {os.path.join(folder, fname)} "
            f"(the Keras cache, {folder}); it is then used as is.") from e


def preprocess_input(x, data_format=None, mode="caffe"):
    """Preprocesses a batch (or one) of RGB images with values in [0, 255], as Keras's
    `imagenet_utils.preprocess_input`.

    `mode` "caffe": RGB to BGR, then each channel minus the ImageNet mean (no scaling);
    "tf": scaled to [-1, 1]; "torch": scaled to [0, 1], then each channel normalized by the
    ImageNet mean and std. A numpy float array is modified in place; other input (an integer
    array, a tensor) comes back as a new float32 array.
    """
    if mode not in {"caffe", "tf", "torch"}:
        raise ValueError(f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode={mode}")
    if data_format is None:
        data_format = image_data_format()
    elif data_format not in {"channels_first", "channels_last"}:
        raise ValueError("Expected data_format to be one of `channels_first` or "
                         f"`channels_last`. Received: data_format={data_format}")
    if isinstance(x, np.ndarray):
        if not issubclass(x.dtype.type, np.floating):
            x = x.astype("float32", copy=False)
    else:
        x = np.array(getattr(x, "numpy", lambda: x)(), dtype="float32")
    if mode == "tf":
        x /= 127.5
        x -= 1.0
        return x
    channel_axis = (0 if x.ndim == 3 else 1) if data_format == "channels_first" else x.ndim - 1
    if mode == "torch":
        x /= 255.0
        mean, std = _TORCH_MEAN, _TORCH_STD
    else:
        x = np.flip(x, axis=channel_axis)
        mean, std = _CAFFE_MEAN, None
    shape = [1] * x.ndim
    shape[channel_axis] = 3
    x -= np.reshape(np.asarray(mean, x.dtype), shape)
    if std is not None:
        x /= np.reshape(np.asarray(std, x.dtype), shape)
    return x


def decode_predictions(preds, top=5):
    """The `top` (class_id, class_name, score) tuples of each row of a (samples, 1000)
    ImageNet prediction, best first; the class index json comes through `get_file`."""
    global CLASS_INDEX
    preds = np.asarray(getattr(preds, "numpy", lambda: preds)())
    if preds.ndim != 2 or preds.shape[1] != 1000:
        raise ValueError("`decode_predictions` expects a batch of predictions (i.e. a 2D array "
                         f"of shape (samples, 1000)). Received array with shape: {preds.shape}")
    if CLASS_INDEX is None:
        path = fetch("imagenet_class_index.json", CLASS_INDEX_PATH,
                     file_hash="c2c37ea517e94d9795004a39431a14cb")
        with open(path) as f:
            CLASS_INDEX = json.load(f)
    results = []
    for pred in preds:
        best = pred.argsort()[-top:][::-1]
        row = [tuple(CLASS_INDEX[str(i)]) + (pred[i],) for i in best]
        row.sort(key=lambda t: t[2], reverse=True)
        results.append(row)
    return results


def obtain_input_shape(input_shape, default_size, min_size, data_format, require_flatten,
                       weights=None):
    """The model's input shape from the user's `input_shape`, checked as Keras checks it
    (3 dims, at least `min_size` square, 3 channels and the default size with ImageNet
    weights and the top); None gives the default (or (None, None, 3) without the top)."""
    first = data_format == "channels_first"
    if weights != "imagenet" and input_shape and len(input_shape) == 3:
        channels = input_shape[0] if first else input_shape[-1]
        if channels not in {1, 3}:
            warnings.warn("This model usually expects 1 or 3 input channels. However, it was "
                          f"passed an input_shape with {channels} input channels.", stacklevel=3)
        default_shape = ((channels, default_size, default_size) if first
                         else (default_size, default_size, channels))
    else:
        default_shape = (3, default_size, default_size) if first else (default_size, default_size, 3)
    if weights == "imagenet" and require_flatten and input_shape is not None \
            and tuple(input_shape) != default_shape:
        raise ValueError("When setting `include_top=True` and loading `imagenet` weights, "
                         f"`input_shape` should be {default_shape}.  Received: input_shape={input_shape}")
    if input_shape:
        input_shape = tuple(input_shape)
        if len(input_shape) != 3:
            raise ValueError("`input_shape` must be a tuple of three integers.")
        channels, spatial = (input_shape[0], input_shape[1:]) if first else (input_shape[-1], input_shape[:2])
        if channels != 3 and weights == "imagenet":
            raise ValueError(f"The input must have 3 channels; Received `input_shape={input_shape}`")
        if any(s is not None and s < min_size for s in spatial):
            raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: "
                             f"input_shape={input_shape}")
    elif require_flatten:
        input_shape = default_shape
    else:
        input_shape = (3, None, None) if first else (None, None, 3)
    if require_flatten and None in input_shape:
        raise ValueError("If `include_top` is True, you should specify a static `input_shape`. "
                         f"Received: input_shape={input_shape}")
    return input_shape


def validate_activation(classifier_activation, weights):
    """With pretrained weights the top may only be softmax or linear (None)."""
    if weights is None:
        return
    if classifier_activation not in {None, "softmax", "linear"}:
        raise ValueError("Only `None` and `softmax` activations are allowed for the "
                         "`classifier_activation` argument when using pretrained weights, with "
                         f"`include_top=True`; Received: classifier_activation={classifier_activation}")


def check_weights(weights, include_top, classes):
    """Keras's checks of `weights` (None, "imagenet" or an existing file) and `classes`."""
    if not (weights in {"imagenet", None} or os.path.exists(os.fspath(weights))):
        raise ValueError("The `weights` argument should be either `None` (random "
                         "initialization), 'imagenet' (pre-training on ImageNet), or the path to "
                         f"the weights file to be loaded.  Received: weights={weights}")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError("If using `weights='imagenet'` with `include_top=True`, `classes` "
                         f"should be 1000.  Received classes={classes}")


def model_input(input_tensor, input_shape, layers):
    """The image input: a new `Input(shape=input_shape)`, or `input_tensor` itself."""
    if input_tensor is None:
        return layers.Input(shape=input_shape)
    if not is_keras_tensor(input_tensor):
        raise TypeError("`input_tensor` must be a KerasTensor (the output of `keras.Input()` or "
                        f"of a layer called on one); received {type(input_tensor).__name__}. "
                        "trainlib does not wrap concrete tensors as inputs.")
    return input_tensor


def finish(img_input, input_tensor, x, name, weights, imagenet_file=None):
    """The `Model` from the inputs (`input_tensor`'s sources when given) to `x`, with weights
    loaded: `imagenet_file()` -> (fname, origin, hash) for "imagenet", else a file path."""
    inputs = get_source_inputs(input_tensor) if input_tensor is not None else img_input
    model = Model(inputs, x, name=name)
    if weights == "imagenet":
        if imagenet_file is None:
            raise ValueError(f"No ImageNet weights are published for {name!r}.")
        model.load_weights(fetch(*imagenet_file()))
    elif weights is not None:
        model.load_weights(weights)
    return model


def pool_or_top(x, layers, include_top, pooling, classes, classifier_activation, weights,
                pool_names=(None, None)):
    """The usual head: global average pooling and the `predictions` Dense with the top, else
    the optional `pooling` ("avg"/"max"); the pooling layers' names are `pool_names` (None:
    the default ones)."""
    if include_top:
        x = layers.GlobalAveragePooling2D(name=pool_names[0])(x)
        validate_activation(classifier_activation, weights)
        return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=pool_names[0])(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=pool_names[1])(x)
    return x


def correct_pad(inputs, kernel_size):
    """The ((top, bottom), (left, right)) zero padding before a stride-2 'valid' convolution
    of `kernel_size` that lines up with TF's 'same' (one less on top/left for even sizes)."""
    first = 2 if image_data_format() == "channels_first" else 1
    size = tuple(inputs.shape[first:first + 2])
    if isinstance(kernel_size, int):
        kernel_size = (kernel_size, kernel_size)
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    half = (kernel_size[0] // 2, kernel_size[1] // 2)
    return (half[0] - adjust[0], half[0]), (half[1] - adjust[1], half[1])


def preprocess_caffe(x, data_format=None):
    """The "caffe" preprocessing (ResNet, VGG): RGB to BGR, each channel minus the ImageNet
    mean, no scaling."""
    return preprocess_input(x, data_format=data_format, mode="caffe")


def preprocess_tf(x, data_format=None):
    """The "tf" preprocessing (ResNetV2, MobileNet, MobileNetV2): pixels scaled to [-1, 1]."""
    return preprocess_input(x, data_format=data_format, mode="tf")
