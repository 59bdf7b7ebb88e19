"""MobileNetV2 (`keras.applications.mobilenet_v2`): inverted residual blocks (1x1 expand,
3x3 depthwise, 1x1 linear projection, residual add when shapes allow), Keras's names.
"""
from .. import layers
from ..backend import is_keras_tensor
from ..settings import image_data_format
from . import imagenet_utils
from .mobilenet import _channel_axis, _imagenet_rows, _square_size

BASE_WEIGHT_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet_v2/"
_SIZES = (96, 128, 160, 192, 224)
# (filters, stride, expansion) of blocks 0..16
_BLOCKS = ((16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6), (64, 2, 6),
           (64, 1, 6), (64, 1, 6), (64, 1, 6), (96, 1, 6), (96, 1, 6), (96, 1, 6), (160, 2, 6),
           (160, 1, 6), (160, 1, 6), (320, 1, 6))


def _make_divisible(v, divisor, min_value=None):
    """`v` rounded to the nearest multiple of `divisor` (at least `min_value`, never more than
    10% below `v`)."""
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _bn(name):
    return layers.BatchNormalization(axis=_channel_axis(), epsilon=1e-3, momentum=0.999, name=name)


def _inverted_res_block(inputs, expansion, stride, alpha, filters, block_id):
    in_channels = inputs.shape[_channel_axis()]
    pointwise_filters = _make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_"
    if block_id:
        x = layers.Conv2D(expansion * in_channels, kernel_size=1, padding="same", use_bias=False,
                          activation=None, name=f"{prefix}expand")(x)
        x = _bn(f"{prefix}expand_BN")(x)
        x = layers.ReLU(6.0, name=f"{prefix}expand_relu")(x)
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name=f"{prefix}pad")(x)
    x = layers.DepthwiseConv2D(kernel_size=3, strides=stride, activation=None, use_bias=False,
                               padding="same" if stride == 1 else "valid",
                               name=f"{prefix}depthwise")(x)
    x = _bn(f"{prefix}depthwise_BN")(x)
    x = layers.ReLU(6.0, name=f"{prefix}depthwise_relu")(x)
    x = layers.Conv2D(pointwise_filters, kernel_size=1, padding="same", use_bias=False,
                      activation=None, name=f"{prefix}project")(x)
    x = _bn(f"{prefix}project_BN")(x)
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=f"{prefix}add")([inputs, x])
    return x


def MobileNetV2(input_shape=None, alpha=1.0, include_top=True, weights="imagenet",  # noqa: N802
                input_tensor=None, pooling=None, classes=1000,
                classifier_activation="softmax", name=None):
    """Instantiates the MobileNetV2 architecture (Keras's arguments; `alpha` the width
    factor; the name defaults to `mobilenetv2_{alpha:.2f}_{rows}`). Inputs go through
    `mobilenet_v2.preprocess_input` ([-1, 1])."""
    imagenet_utils.check_weights(weights, include_top, classes)
    if input_tensor is not None and not is_keras_tensor(input_tensor):
        raise ValueError(f"input_tensor is not a Keras tensor; Received `input_tensor={input_tensor}`")
    first = image_data_format() == "channels_first"
    if input_shape is not None and input_tensor is not None:
        given, axis = (input_tensor.shape[1], input_shape[1]) if first else (input_tensor.shape[2], input_shape[1])
        if given != axis:
            raise ValueError("input_tensor's width must equal input_shape's; Received "
                             f"`input_tensor.shape={input_tensor.shape}`, `input_shape={input_shape}`")
    probe = input_shape if input_shape is not None or input_tensor is None \
        else tuple(input_tensor.shape[1:])
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=_square_size(probe, _SIZES) or 224, min_size=32,
        data_format=image_data_format(), require_flatten=include_top, weights=weights)
    rows, cols = input_shape[1:3] if first else input_shape[:2]
    if weights == "imagenet":
        if alpha not in (0.35, 0.50, 0.75, 1.0, 1.3, 1.4):
            raise ValueError("If imagenet weights are being loaded, alpha must be one of `0.35`, "
                             f"`0.50`, `0.75`, `1.0`, `1.3` or `1.4` only; Received `alpha={alpha}`")
        rows = _imagenet_rows(rows, cols, _SIZES)
    img_input = imagenet_utils.model_input(input_tensor, input_shape, layers)
    x = layers.Conv2D(_make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2),
                      padding="same", use_bias=False, name="Conv1")(img_input)
    x = _bn("bn_Conv1")(x)
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    for block_id, (filters, stride, expansion) in enumerate(_BLOCKS):
        x = _inverted_res_block(x, filters=filters, alpha=alpha, stride=stride,
                                expansion=expansion, block_id=block_id)
    last = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = _bn("Conv_1_bn")(x)
    x = layers.ReLU(6.0, name="out_relu")(x)
    x = imagenet_utils.pool_or_top(x, layers, include_top, pooling, classes,
                                   classifier_activation, weights)
    if name is None:
        name = f"mobilenetv2_{alpha:0.2f}_{rows}"

    def imagenet_file():
        top = "" if include_top else "_no_top"
        fname = f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}{top}.h5"
        return fname, BASE_WEIGHT_PATH + fname, None

    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, imagenet_file)


preprocess_input = imagenet_utils.preprocess_tf
decode_predictions = imagenet_utils.decode_predictions
