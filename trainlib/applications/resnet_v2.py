"""ResNet50V2/101V2/152V2 (`keras.applications.resnet_v2`): the pre-activation ResNets, built
by `resnet.ResNet` with `preact=True`; inputs are scaled to [-1, 1].
"""
from . import imagenet_utils
from .resnet import _builder

ResNet50V2 = _builder("ResNet50V2", (3, 4, 6, 3), 2)
ResNet101V2 = _builder("ResNet101V2", (3, 4, 23, 3), 2)
ResNet152V2 = _builder("ResNet152V2", (3, 8, 36, 3), 2)
preprocess_input = imagenet_utils.preprocess_tf
decode_predictions = imagenet_utils.decode_predictions
