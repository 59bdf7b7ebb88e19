"""MobileNet v1 (`keras.applications.mobilenet`): a stride-2 conv, then 13 depthwise-separable
blocks (depthwise 3x3, BN, relu6, pointwise 1x1, BN, relu6), width `alpha`, Keras's names.
"""
import warnings

from .. import layers
from ..settings import image_data_format
from . import imagenet_utils

BASE_WEIGHT_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet/"
_ALPHA_TEXT = {1.0: "1_0", 0.75: "7_5", 0.5: "5_0", 0.25: "2_5"}
# (pointwise filters, strides) of blocks 1..13
_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
           (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1))


def _channel_axis():
    return 1 if image_data_format() == "channels_first" else -1


def _square_size(input_shape, sizes):
    """The input's side when it is square and one of `sizes` (the published resolutions),
    else None."""
    if input_shape is None:
        return None
    rows, cols = input_shape[1:3] if image_data_format() == "channels_first" else input_shape[:2]
    return rows if rows == cols and rows in sizes else None


def _imagenet_rows(rows, cols, sizes):
    """The resolution whose ImageNet weights to load: `rows` when square and published, else
    224 (with Keras's warning)."""
    if rows == cols and rows in sizes:
        return rows
    warnings.warn(f"`input_shape` is undefined or non-square, or `rows` is not in {list(sizes)}. "
                  "Weights for input shape (224, 224) will be loaded as the default.", stacklevel=3)
    return 224


def MobileNet(input_shape=None, alpha=1.0, depth_multiplier=1, dropout=1e-3,  # noqa: N802
              include_top=True, weights="imagenet", input_tensor=None, pooling=None,
              classes=1000, classifier_activation="softmax", name=None):
    """Instantiates the MobileNet architecture (Keras's arguments: `alpha` the width factor,
    `depth_multiplier` of the depthwise convolutions, `dropout` before the top; the name
    defaults to `mobilenet_{alpha:.2f}_{rows}`). Inputs go through
    `mobilenet.preprocess_input` ([-1, 1])."""
    imagenet_utils.check_weights(weights, include_top, classes)
    sizes = (128, 160, 192, 224)
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=_square_size(input_shape, sizes) or 224, min_size=32,
        data_format=image_data_format(), require_flatten=include_top, weights=weights)
    rows, cols = input_shape[1:3] if image_data_format() == "channels_first" else input_shape[:2]
    if weights == "imagenet":
        if depth_multiplier != 1:
            raise ValueError("If imagenet weights are being loaded, depth multiplier must be 1.  "
                             f"Received depth_multiplier={depth_multiplier}")
        if alpha not in _ALPHA_TEXT:
            raise ValueError("If imagenet weights are being loaded, alpha can be one of`0.25`, "
                             f"`0.50`, `0.75` or `1.0` only.  Received alpha={alpha}")
        rows = _imagenet_rows(rows, cols, sizes)
    img_input = imagenet_utils.model_input(input_tensor, input_shape, layers)
    axis = _channel_axis()
    x = layers.Conv2D(int(32 * alpha), (3, 3), padding="same", use_bias=False, strides=(2, 2),
                      name="conv1")(img_input)
    x = layers.BatchNormalization(axis=axis, name="conv1_bn")(x)
    x = layers.ReLU(6.0, name="conv1_relu")(x)
    for block_id, (filters, stride) in enumerate(_BLOCKS, 1):
        if stride != 1:
            x = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(x)
        x = layers.DepthwiseConv2D((3, 3), padding="same" if stride == 1 else "valid",
                                   depth_multiplier=depth_multiplier, strides=(stride, stride),
                                   use_bias=False, name=f"conv_dw_{block_id}")(x)
        x = layers.BatchNormalization(axis=axis, name=f"conv_dw_{block_id}_bn")(x)
        x = layers.ReLU(6.0, name=f"conv_dw_{block_id}_relu")(x)
        x = layers.Conv2D(int(filters * alpha), (1, 1), padding="same", use_bias=False,
                          strides=(1, 1), name=f"conv_pw_{block_id}")(x)
        x = layers.BatchNormalization(axis=axis, name=f"conv_pw_{block_id}_bn")(x)
        x = layers.ReLU(6.0, name=f"conv_pw_{block_id}_relu")(x)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.pool_or_top(x, layers, False, pooling, classes, None, weights)
    if name is None:
        name = f"mobilenet_{alpha:0.2f}_{rows}"

    def imagenet_file():
        fname = f"mobilenet_{_ALPHA_TEXT[alpha]}_{rows}_tf{'' if include_top else '_no_top'}.h5"
        return fname, BASE_WEIGHT_PATH + fname, None

    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, imagenet_file)


preprocess_input = imagenet_utils.preprocess_tf
decode_predictions = imagenet_utils.decode_predictions
