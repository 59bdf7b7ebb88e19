"""`trainlib.keras.applications`: Keras 3's `keras.applications` layout over
`trainlib.applications` (`keras.applications.ResNet50`, `keras.applications.resnet50.preprocess_input`,
...). This package only re-exports."""
from ...applications import (DenseNet121, DenseNet169, DenseNet201,  # noqa: F401
                             EfficientNetB0, EfficientNetB1, EfficientNetB2, EfficientNetB3, EfficientNetB4, EfficientNetB5, EfficientNetB6,
                             EfficientNetB7, MobileNet, MobileNetV2, ResNet50, ResNet50V2,
                             ResNet101, ResNet101V2, ResNet152, ResNet152V2, VGG16, VGG19)
from . import (densenet, efficientnet, imagenet_utils, mobilenet, mobilenet_v2, resnet,  # noqa: F401
               resnet50, resnet_v2, vgg16, vgg19)
