"""VGG16 and VGG19 (re-exported by `vgg16.py` and `vgg19.py`), one builder: five blocks of 3x3 relu convolutions
and 2x2 max pools, then flatten and fc1/fc2/predictions, with Keras's layer names.
"""
from .. import layers
from ..settings import image_data_format
from . import imagenet_utils

_URL = "https://storage.googleapis.com/tensorflow/keras-applications/"


def VGG(convs_per_block, weights_name, hashes, include_top=True, weights="imagenet",  # noqa: N802
        input_tensor=None, input_shape=None, pooling=None, classes=1000,
        classifier_activation="softmax", name="vgg"):
    """A VGG with `convs_per_block[i]` convolutions in block i+1 (VGG16: 2,2,3,3,3)."""
    imagenet_utils.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=224, min_size=32, data_format=image_data_format(),
        require_flatten=include_top, weights=weights)
    img_input = imagenet_utils.model_input(input_tensor, input_shape, layers)
    x = img_input
    for block, (filters, n) in enumerate(zip((64, 128, 256, 512, 512), convs_per_block), 1):
        for i in range(1, n + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same",
                              name=f"block{block}_conv{i}")(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.pool_or_top(x, layers, False, pooling, classes, None, weights)

    def imagenet_file():
        suffix = "" if include_top else "_notop"
        fname = f"{weights_name}_weights_tf_dim_ordering_tf_kernels{suffix}.h5"
        return fname, f"{_URL}{weights_name}/{fname}", hashes[0 if include_top else 1]

    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, imagenet_file)


def _builder(public_name, convs_per_block, hashes):
    weights_name = public_name.lower()

    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
              pooling=None, classes=1000, classifier_activation="softmax", name=weights_name):
        return VGG(convs_per_block, weights_name, hashes, include_top, weights, input_tensor,
                   input_shape, pooling, classes, classifier_activation, name)
    build.__doc__ = (f"Instantiates the {public_name} architecture (Keras's arguments; inputs at "
                     f"least 32x32, through `{weights_name}.preprocess_input`).")
    build.__name__ = build.__qualname__ = public_name
    return build


VGG16 = _builder("VGG16", (2, 2, 3, 3, 3),
                 ("64373286793e3c8b2b4e3219cbf3544b", "6d6bbae143d832006294945121d1f1fc"))
VGG19 = _builder("VGG19", (2, 2, 4, 4, 4),
                 ("cbe5617147190e668d6c5d5026f83318", "253f8cb515780f3b799900260a226db6"))
preprocess_input = imagenet_utils.preprocess_caffe
decode_predictions = imagenet_utils.decode_predictions
