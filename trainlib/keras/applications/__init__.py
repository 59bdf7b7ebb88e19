"""`trainlib.keras.applications`: Keras 3's `keras.applications` layout over
`trainlib.applications` (`keras.applications.ResNet50`, `keras.applications.resnet50.preprocess_input`,
...). This package only re-exports."""
from ...applications import (MobileNet, MobileNetV2, ResNet50, ResNet50V2, ResNet101,  # noqa: F401
                             ResNet101V2, ResNet152, ResNet152V2, VGG16, VGG19)
from . import (imagenet_utils, mobilenet, mobilenet_v2, resnet, resnet50, resnet_v2,  # noqa: F401
               vgg16, vgg19)
