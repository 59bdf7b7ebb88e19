"""`keras.applications` built from trainlib's layers: ResNet50/101/152, ResNet50V2/101V2/152V2,
VGG16/19, MobileNet, MobileNetV2, EfficientNetB0-B7, DenseNet121/169/201, with Keras's layer names, so Keras
weight files (and
`weights="imagenet"` from the Keras cache, ~/.keras/models) load into them. One module per
family, each with its `preprocess_input` and `decode_predictions`.
"""
from . import (densenet, efficientnet, imagenet_utils, mobilenet, mobilenet_v2, resnet,  # noqa: F401
               resnet50, resnet_v2, vgg16, vgg19)
from .densenet import DenseNet121, DenseNet169, DenseNet201  # noqa: F401
from .efficientnet import (EfficientNetB0, EfficientNetB1, EfficientNetB2,  # noqa: F401
                           EfficientNetB3, EfficientNetB4, EfficientNetB5, EfficientNetB6,
                           EfficientNetB7)
from .mobilenet import MobileNet  # noqa: F401
from .mobilenet_v2 import MobileNetV2  # noqa: F401
from .resnet import ResNet50, ResNet101, ResNet152  # noqa: F401
from .resnet_v2 import ResNet50V2, ResNet101V2, ResNet152V2  # noqa: F401
from .vgg16 import VGG16  # noqa: F401
from .vgg19 import VGG19  # noqa: F401
