"""DenseNet121/169/201 (`keras.applications.densenet`): dense blocks of BN-relu-1x1-BN-relu-3x3
convolutions concatenated onto their input, halving transitions, Keras's layer names;
channels_last only, as in Keras. Inputs go through "torch" preprocessing.
"""
from .. import layers
from ..settings import image_data_format
from . import imagenet_utils

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/densenet/"
WEIGHTS_HASHES = {  # blocks: (name, hash with the top, hash without)
    (6, 12, 24, 16): ("densenet121", "9d60b8095a5708f2dcce2bca79d332c7", "30ee3e1110167f948a6b9946edeeb738"),
    (6, 12, 32, 32): ("densenet169", "d699b8f76981ab1b30698df4c175e90b", "b8c4d4c20dd625c148057b9ff1c1176b"),
    (6, 12, 48, 32): ("densenet201", "1ceb130c1ea1b78c3bf6114dbdfd8807", "c13680b51ded0fb44dff2d8f86ac8bb1"),
}
_EPS = 1.001e-5


def _bn_relu(x, name):
    x = layers.BatchNormalization(axis=3, epsilon=_EPS, name=f"{name}_bn")(x)
    return layers.Activation("relu", name=f"{name}_relu")(x)


def conv_block(x, growth_rate, name):
    """BN-relu-1x1 (4*growth_rate)-BN-relu-3x3 (growth_rate), concatenated onto `x`."""
    x1 = _bn_relu(x, f"{name}_0")
    x1 = layers.Conv2D(4 * growth_rate, 1, use_bias=False, name=f"{name}_1_conv")(x1)
    x1 = _bn_relu(x1, f"{name}_1")
    x1 = layers.Conv2D(growth_rate, 3, padding="same", use_bias=False, name=f"{name}_2_conv")(x1)
    return layers.Concatenate(axis=3, name=f"{name}_concat")([x, x1])


def dense_block(x, blocks, name):
    """`blocks` conv blocks of growth rate 32."""
    for i in range(blocks):
        x = conv_block(x, 32, name=f"{name}_block{i + 1}")
    return x


def transition_block(x, reduction, name):
    """BN-relu, a 1x1 convolution to `reduction` of the channels, 2x2 average pooling."""
    x = _bn_relu(x, name)
    x = layers.Conv2D(int(x.shape[3] * reduction), 1, use_bias=False, name=f"{name}_conv")(x)
    return layers.AveragePooling2D(2, strides=2, name=f"{name}_pool")(x)


def DenseNet(blocks, include_top=True, weights="imagenet", input_tensor=None,  # noqa: N802
             input_shape=None, pooling=None, classes=1000, classifier_activation="softmax",
             name="densenet"):
    """A DenseNet with `blocks[i]` conv blocks in dense block i (DenseNet121: 6, 12, 24, 16)."""
    if image_data_format() == "channels_first":
        raise ValueError("DenseNet does not support the `channels_first` image data format. "
                         "Switch to `channels_last` (keras.config.set_image_data_format).")
    imagenet_utils.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=224, min_size=32, data_format=image_data_format(),
        require_flatten=include_top, weights=weights)
    img_input = imagenet_utils.model_input(input_tensor, input_shape, layers)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)))(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1_conv")(x)
    x = _bn_relu(x, "conv1")
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1")(x)
    for i, n in enumerate(blocks):
        x = dense_block(x, n, name=f"conv{i + 2}")
        if i < len(blocks) - 1:
            x = transition_block(x, 0.5, name=f"pool{i + 2}")
    x = layers.BatchNormalization(axis=3, epsilon=_EPS, name="bn")(x)
    x = layers.Activation("relu", name="relu")(x)
    x = imagenet_utils.pool_or_top(x, layers, include_top, pooling, classes,
                                   classifier_activation, weights, ("avg_pool", "max_pool"))

    def imagenet_file():
        if tuple(blocks) not in WEIGHTS_HASHES:
            raise ValueError("weights_path undefined")
        base, with_top, no_top = WEIGHTS_HASHES[tuple(blocks)]
        fname = f"{base}_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
        return fname, BASE_WEIGHTS_PATH + fname, with_top if include_top else no_top

    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, imagenet_file)


def _builder(depth, blocks):
    public = f"DenseNet{depth}"

    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
              pooling=None, classes=1000, classifier_activation="softmax",
              name=f"densenet{depth}"):
        return DenseNet(list(blocks), include_top, weights, input_tensor, input_shape, pooling,
                        classes, classifier_activation, name=name)
    build.__doc__ = (f"Instantiates the {public} architecture (Keras's arguments; inputs at "
                     "least 32x32, through `densenet.preprocess_input`).")
    build.__name__ = build.__qualname__ = public
    return build


DenseNet121 = _builder(121, (6, 12, 24, 16))
DenseNet169 = _builder(169, (6, 12, 32, 32))
DenseNet201 = _builder(201, (6, 12, 48, 32))


def preprocess_input(x, data_format=None):
    """DenseNet's preprocessing ("torch"): pixels scaled to [0, 1], then each channel
    normalized by the ImageNet mean and std."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="torch")


decode_predictions = imagenet_utils.decode_predictions
