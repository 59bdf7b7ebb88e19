"""ResNet50/101/152 (`keras.applications.resnet`, `keras.applications.resnet50`) and the
builder they share with ResNetV2 (`resnet_v2.py`): stem, stacked bottleneck blocks, head,
with Keras's layer names so Keras weight files load.
"""
from .. import layers
from ..settings import image_data_format
from . import imagenet_utils

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/resnet/"
WEIGHTS_HASHES = {
    "resnet50": ("2cb95161c43110f7111970584f804107", "4d473c1dd8becc155b73f8504c6f6626"),
    "resnet101": ("f1aeb4b969a6efcfb50fad2f0c20cfc5", "88cf7a10940856eca736dc7b7e228a21"),
    "resnet152": ("100835be76be38e30d865e96f2aaae62", "ee4c566cf9a93f14d82f913c2dc6dd0c"),
    "resnet50v2": ("3ef43a0b657b3be2300d5770ece849e0", "fac2f116257151a9d068a22e544a4917"),
    "resnet101v2": ("6343647c601c52e1368623803854d971", "c0ed64b8031c3730f411d2eb4eea35b5"),
    "resnet152v2": ("a49b44d1979771252814e80f8ec446f9", "ed17cf2e0169df9d443503ef94b23b33"),
}
_EPS = 1.001e-5


def _bn_axis():
    return 3 if image_data_format() == "channels_last" else 1


def _bn(name):
    return layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPS, name=name)


def ResNet(stack_fn, preact, use_bias, include_top=True, weights="imagenet",  # noqa: N802
           input_tensor=None, input_shape=None, pooling=None, classes=1000,
           classifier_activation="softmax", name="resnet", weights_name=None):
    """A ResNet (`preact=False`) or ResNetV2 (`preact=True`) whose residual stages are
    `stack_fn(x)`; the other arguments are those of `ResNet50`."""
    imagenet_utils.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=224, min_size=32, data_format=image_data_format(),
        require_flatten=include_top, weights=weights)
    img_input = imagenet_utils.model_input(input_tensor, input_shape, layers)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=use_bias, name="conv1_conv")(x)
    if not preact:
        x = _bn("conv1_bn")(x)
        x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    x = stack_fn(x)
    if preact:
        x = _bn("post_bn")(x)
        x = layers.Activation("relu", name="post_relu")(x)
    x = imagenet_utils.pool_or_top(x, layers, include_top, pooling, classes,
                                   classifier_activation, weights, ("avg_pool", "max_pool"))

    def imagenet_file():
        if weights_name not in WEIGHTS_HASHES:
            raise ValueError(f"No ImageNet weights are published for {weights_name!r}.")
        suffix = "" if include_top else "_notop"
        fname = f"{weights_name}_weights_tf_dim_ordering_tf_kernels{suffix}.h5"
        return fname, BASE_WEIGHTS_PATH + fname, WEIGHTS_HASHES[weights_name][0 if include_top else 1]

    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, imagenet_file)


def residual_block_v1(x, filters, kernel_size=3, stride=1, conv_shortcut=True, name=None):
    """ResNet's bottleneck block: 1x1 (strided), kxk, 1x1 to 4*filters, plus the shortcut
    (a strided 1x1 convolution, or the input), then relu."""
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(x)
        shortcut = _bn(f"{name}_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=f"{name}_1_conv")(x)
    x = _bn(f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.Conv2D(filters, kernel_size, padding="SAME", name=f"{name}_2_conv")(x)
    x = _bn(f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    x = _bn(f"{name}_3_bn")(x)
    x = layers.Add(name=f"{name}_add")([shortcut, x])
    return layers.Activation("relu", name=f"{name}_out")(x)


def stack_residual_blocks_v1(x, filters, blocks, stride1=2, name=None):
    """`blocks` v1 blocks; the first has the convolution shortcut and stride `stride1`."""
    x = residual_block_v1(x, filters, stride=stride1, name=f"{name}_block1")
    for i in range(2, blocks + 1):
        x = residual_block_v1(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def residual_block_v2(x, filters, kernel_size=3, stride=1, conv_shortcut=False, name=None):
    """ResNetV2's pre-activation bottleneck block (the stride sits on the kxk convolution;
    the identity shortcut is subsampled by a 1x1 max pool when strided)."""
    preact = _bn(f"{name}_preact_bn")(x)
    preact = layers.Activation("relu", name=f"{name}_preact_relu")(preact)
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=f"{name}_1_conv")(preact)
    x = _bn(f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=f"{name}_2_pad")(x)
    x = layers.Conv2D(filters, kernel_size, strides=stride, use_bias=False, name=f"{name}_2_conv")(x)
    x = _bn(f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    return layers.Add(name=f"{name}_out")([shortcut, x])


def stack_residual_blocks_v2(x, filters, blocks, stride1=2, name=None):
    """`blocks` v2 blocks: the first with the convolution shortcut, the last strided."""
    x = residual_block_v2(x, filters, conv_shortcut=True, name=f"{name}_block1")
    for i in range(2, blocks):
        x = residual_block_v2(x, filters, name=f"{name}_block{i}")
    return residual_block_v2(x, filters, stride=stride1, name=f"{name}_block{blocks}")


def _stages(block_counts, version):
    stack = stack_residual_blocks_v1 if version == 1 else stack_residual_blocks_v2
    strides = (1, 2, 2, 2) if version == 1 else (2, 2, 2, 1)

    def stack_fn(x):
        for i, (filters, blocks, s) in enumerate(zip((64, 128, 256, 512), block_counts, strides)):
            x = stack(x, filters, blocks, stride1=s, name=f"conv{i + 2}")
        return x
    return stack_fn


_ARGS = """

    Args: include_top (the Dense `predictions` head), weights (None, "imagenet" or a Keras
    .h5/.weights.h5 path), input_tensor, input_shape (at least 32x32), pooling (None, "avg",
    "max" without the top), classes, classifier_activation, name -- as in Keras. Inputs go
    through this module's `preprocess_input` first.
"""


def _builder(public_name, block_counts, version):
    weights_name = public_name.lower()

    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
              pooling=None, classes=1000, classifier_activation="softmax", name=weights_name):
        return ResNet(_stages(block_counts, version), preact=version == 2, use_bias=True,
                      include_top=include_top, weights=weights, input_tensor=input_tensor,
                      input_shape=input_shape, pooling=pooling, classes=classes,
                      classifier_activation=classifier_activation, name=name,
                      weights_name=weights_name)
    build.__doc__ = f"Instantiates the {public_name} architecture." + _ARGS
    build.__name__ = build.__qualname__ = public_name
    return build


ResNet50 = _builder("ResNet50", (3, 4, 6, 3), 1)
ResNet101 = _builder("ResNet101", (3, 4, 23, 3), 1)
ResNet152 = _builder("ResNet152", (3, 8, 36, 3), 1)
preprocess_input = imagenet_utils.preprocess_caffe
decode_predictions = imagenet_utils.decode_predictions
