"""EfficientNetB0-B7 (`keras.applications.efficientnet`): one builder scaled by width, depth
and resolution; MBConv blocks with squeeze-and-excitation, Keras's layer names. The model
rescales its own input (Rescaling, Normalization), so `preprocess_input` is the identity.
"""
import copy
import math

from .. import layers
from ..settings import image_data_format
from . import imagenet_utils
from .mobilenet_v2 import _make_divisible

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/keras-applications/"
WEIGHTS_HASHES = {
    "b0": ("902e53a9f72be733fc0bcb005b3ebbac", "50bc09e76180e00e4465e1a485ddc09d"),
    "b1": ("1d254153d4ab51201f1646940f018540", "74c4e6b3e1f6a1eea24c589628592432"),
    "b2": ("b15cce36ff4dcbd00b6dd88e7857a6ad", "111f8e2ac8aa800a7a99e3239f7bfb39"),
    "b3": ("ffd1fdc53d0ce67064dc6a9c7960ede0", "af6d107764bb5b1abb91932881670226"),
    "b4": ("18c95ad55216b8f92d7e70b3a046e2fc", "ebc24e6d6c33eaebbd558eafbeedf1ba"),
    "b5": ("ace28f2a6363774853a83a0b21b9421a", "38879255a25d3c92d5e44e04ae6cec6f"),
    "b6": ("165f6e37dce68623721b423839de8be5", "9ecce42647a20130c1f39a5d4cb75743"),
    "b7": ("8c03f828fec3ef71311cd463b6759d99", "cbcfe4450ddf6f3ad90b1b398090fe4a"),
}
# kernel_size, repeats, filters_in, filters_out, expand_ratio, strides of the 7 stages
# (all with id_skip and se_ratio 0.25)
_STAGES = ((3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2), (3, 3, 40, 80, 6, 2),
           (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2), (3, 1, 192, 320, 6, 1))
DEFAULT_BLOCKS_ARGS = [
    dict(kernel_size=k, repeats=r, filters_in=fi, filters_out=fo, expand_ratio=e, id_skip=True,
         strides=s, se_ratio=0.25) for k, r, fi, fo, e, s in _STAGES]
CONV_KERNEL_INITIALIZER = {"class_name": "VarianceScaling", "config": {
    "scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"}}
DENSE_KERNEL_INITIALIZER = {"class_name": "VarianceScaling", "config": {
    "scale": 1.0 / 3.0, "mode": "fan_out", "distribution": "uniform"}}
IMAGENET_STDDEV_RGB = [0.229, 0.224, 0.225]


def _bn_axis():
    return 3 if image_data_format() == "channels_last" else 1


def EfficientNet(width_coefficient, depth_coefficient, default_size, dropout_rate=0.2,  # noqa: N802
                 drop_connect_rate=0.2, depth_divisor=8, activation="swish",
                 blocks_args="default", name="efficientnet", include_top=True,
                 weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                 classes=1000, classifier_activation="softmax", weights_name=None):
    """An EfficientNet scaled by `width_coefficient` (filters) and `depth_coefficient`
    (repeats), `default_size` its input side; the other arguments are `EfficientNetB0`'s."""
    if blocks_args == "default":
        blocks_args = DEFAULT_BLOCKS_ARGS
    imagenet_utils.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=default_size, min_size=32, data_format=image_data_format(),
        require_flatten=include_top, weights=weights)
    img_input = imagenet_utils.model_input(input_tensor, input_shape, layers)
    bn_axis = _bn_axis()

    def round_filters(filters):
        return int(_make_divisible(filters * width_coefficient, depth_divisor))

    def round_repeats(repeats):
        return int(math.ceil(depth_coefficient * repeats))

    x = layers.Rescaling(1.0 / 255.0)(img_input)
    x = layers.Normalization(axis=bn_axis)(x)
    if weights == "imagenet":  # the published weights' Normalization holds variances
        x = layers.Rescaling([1.0 / math.sqrt(s) for s in IMAGENET_STDDEV_RGB])(x)
    x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name="stem_conv_pad")(x)
    x = layers.Conv2D(round_filters(32), 3, strides=2, padding="valid", use_bias=False,
                      kernel_initializer=CONV_KERNEL_INITIALIZER, name="stem_conv")(x)
    x = layers.BatchNormalization(axis=bn_axis, name="stem_bn")(x)
    x = layers.Activation(activation, name="stem_activation")(x)

    blocks_args = copy.deepcopy(blocks_args)
    b = 0
    total = float(sum(round_repeats(args["repeats"]) for args in blocks_args))
    for i, args in enumerate(blocks_args):
        if args["repeats"] <= 0:
            raise ValueError("The number of repeats in `EfficientNet` must be > 0. "
                             f"Received: repeats={args['repeats']}")
        args["filters_in"] = round_filters(args["filters_in"])
        args["filters_out"] = round_filters(args["filters_out"])
        for j in range(round_repeats(args.pop("repeats"))):
            if j > 0:
                args["strides"] = 1
                args["filters_in"] = args["filters_out"]
            x = block(x, activation, drop_connect_rate * b / total, name=f"block{i + 1}{chr(j + 97)}_",
                      **args)
            b += 1

    x = layers.Conv2D(round_filters(1280), 1, padding="same", use_bias=False,
                      kernel_initializer=CONV_KERNEL_INITIALIZER, name="top_conv")(x)
    x = layers.BatchNormalization(axis=bn_axis, name="top_bn")(x)
    x = layers.Activation(activation, name="top_activation")(x)
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate, name="top_dropout")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation,
                         kernel_initializer=DENSE_KERNEL_INITIALIZER, name="predictions")(x)
    else:
        x = imagenet_utils.pool_or_top(x, layers, False, pooling, classes, None, weights,
                                       ("avg_pool", "max_pool"))

    def imagenet_file():
        fname = name + (".h5" if include_top else "_notop.h5")
        return fname, BASE_WEIGHTS_PATH + fname, WEIGHTS_HASHES[weights_name][0 if include_top else 1]

    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, imagenet_file)


def block(inputs, activation="swish", drop_rate=0.0, name="", filters_in=32, filters_out=16,
          kernel_size=3, strides=1, expand_ratio=1, se_ratio=0.0, id_skip=True):
    """An MBConv block: 1x1 expansion, depthwise conv, squeeze-and-excitation, 1x1 projection,
    and (same shape, stride 1) a residual add after a per-sample drop of rate `drop_rate`."""
    bn_axis = _bn_axis()
    filters = filters_in * expand_ratio
    if expand_ratio != 1:
        x = layers.Conv2D(filters, 1, padding="same", use_bias=False,
                          kernel_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}expand_conv")(inputs)
        x = layers.BatchNormalization(axis=bn_axis, name=f"{name}expand_bn")(x)
        x = layers.Activation(activation, name=f"{name}expand_activation")(x)
    else:
        x = inputs
    if strides == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size),
                                 name=f"{name}dwconv_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=strides,
                               padding="valid" if strides == 2 else "same", use_bias=False,
                               depthwise_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}dwconv")(x)
    x = layers.BatchNormalization(axis=bn_axis, name=f"{name}bn")(x)
    x = layers.Activation(activation, name=f"{name}activation")(x)
    if 0 < se_ratio <= 1:
        filters_se = max(1, int(filters_in * se_ratio))
        se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
        se_shape = (filters, 1, 1) if bn_axis == 1 else (1, 1, filters)
        se = layers.Reshape(se_shape, name=f"{name}se_reshape")(se)
        se = layers.Conv2D(filters_se, 1, padding="same", activation=activation,
                           kernel_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}se_reduce")(se)
        se = layers.Conv2D(filters, 1, padding="same", activation="sigmoid",
                           kernel_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}se_expand")(se)
        x = layers.multiply([x, se], name=f"{name}se_excite")
    x = layers.Conv2D(filters_out, 1, padding="same", use_bias=False,
                      kernel_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}project_conv")(x)
    x = layers.BatchNormalization(axis=bn_axis, name=f"{name}project_bn")(x)
    if id_skip and strides == 1 and filters_in == filters_out:
        if drop_rate > 0:
            x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


# width, depth, resolution, dropout of B0..B7
_SCALES = ((1.0, 1.0, 224, 0.2), (1.0, 1.1, 240, 0.2), (1.1, 1.2, 260, 0.3),
           (1.2, 1.4, 300, 0.3), (1.4, 1.8, 380, 0.4), (1.6, 2.2, 456, 0.4),
           (1.8, 2.6, 528, 0.5), (2.0, 3.1, 600, 0.5))


def _builder(index):
    width, depth, size, dropout = _SCALES[index]
    public = f"EfficientNetB{index}"

    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
              pooling=None, classes=1000, classifier_activation="softmax",
              name=f"efficientnetb{index}"):
        return EfficientNet(width, depth, size, dropout, name=name, include_top=include_top,
                            weights=weights, input_tensor=input_tensor, input_shape=input_shape,
                            pooling=pooling, classes=classes,
                            classifier_activation=classifier_activation, weights_name=f"b{index}")
    build.__doc__ = (f"Instantiates the {public} architecture (default input {size}x{size}, at "
                     "least 32x32; Keras's arguments). It takes pixels in [0, 255]: the "
                     "rescaling is part of the model.")
    build.__name__ = build.__qualname__ = public
    return build


EfficientNetB0, EfficientNetB1, EfficientNetB2, EfficientNetB3, EfficientNetB4, \
    EfficientNetB5, EfficientNetB6, EfficientNetB7 = (_builder(i) for i in range(8))


def preprocess_input(x, data_format=None):  # noqa: ARG001 -- Keras's signature
    """The identity: EfficientNet models rescale their own input (kept for API compatibility)."""
    return x


decode_predictions = imagenet_utils.decode_predictions
