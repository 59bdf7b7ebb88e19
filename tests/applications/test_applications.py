"""trainlib.applications without Keras: each builder's parameter count against the count
Keras publishes (keras.io/api/applications, with the top at 224x224), one forward pass at a
small input, the input checks, and preprocess_input against the numpy formulas."""
import numpy as np
import pytest

import trainlib as tl
from trainlib.applications import imagenet_utils

apps = tl.keras.applications

PUBLISHED = {  # builder: parameters with the top (1000 classes)
    "ResNet50": 25_636_712, "ResNet101": 44_707_176, "ResNet152": 60_419_944,
    "ResNet50V2": 25_613_800, "ResNet101V2": 44_675_560, "ResNet152V2": 60_380_648,
    "VGG16": 138_357_544, "VGG19": 143_667_240,
    "MobileNet": 4_253_864, "MobileNetV2": 3_538_984,
    "EfficientNetB0": 5_330_571, "EfficientNetB1": 7_856_239, "EfficientNetB2": 9_177_569,
    "EfficientNetB3": 12_320_535,
    "DenseNet121": 8_062_504, "DenseNet169": 14_307_880, "DenseNet201": 20_242_984,
}
PUBLISHED_SLOW = {"EfficientNetB4": 19_466_823, "EfficientNetB5": 30_562_527,
                  "EfficientNetB6": 43_265_143, "EfficientNetB7": 66_658_687}
MODULE = {"ResNet50": "resnet50", "ResNet50V2": "resnet_v2", "VGG16": "vgg16",
          "MobileNet": "mobilenet", "MobileNetV2": "mobilenet_v2", "EfficientNetB0": "efficientnet",
          "DenseNet121": "densenet"}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_parameter_count_matches_keras(name):
    model = getattr(apps, name)(weights=None)
    assert model.count_params() == PUBLISHED[name]
    assert model.layers[-1].name == "predictions"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PUBLISHED_SLOW))
def test_parameter_count_matches_keras_large(name):
    assert getattr(apps, name)(weights=None).count_params() == PUBLISHED_SLOW[name]


@pytest.mark.parametrize("name", sorted(MODULE))
def test_forward_pass_small_input(name):
    model = getattr(apps, name)(weights=None, include_top=True, input_shape=(32, 32, 3), classes=3)
    x = np.random.default_rng(0).uniform(0, 255, size=(2, 32, 32, 3)).astype(np.float32)
    x = getattr(apps, MODULE[name]).preprocess_input(x)
    y = model.predict(x, verbose=0)
    assert y.shape == (2, 3)
    np.testing.assert_allclose(y.sum(axis=1), 1.0, rtol=1e-5)  # softmax rows


def test_pooling_and_input_tensor():
    inp = tl.keras.Input((32, 32, 3))
    model = apps.ResNet50V2(weights=None, include_top=False, input_tensor=inp, pooling="max")
    assert model.inputs[0] is inp and tuple(model.outputs[0].shape) == (None, 2048)
    assert tuple(apps.VGG16(weights=None, include_top=False).inputs[0].shape) == (None, None, None, 3)


def test_input_checks():
    with pytest.raises(ValueError, match="at least 32x32"):
        apps.ResNet50(weights=None, include_top=False, input_shape=(16, 16, 3))
    with pytest.raises(ValueError, match="static `input_shape`"):
        apps.VGG16(weights=None, input_shape=(None, None, 3))
    with pytest.raises(ValueError, match="`classes` should be 1000"):
        apps.ResNet50(weights="imagenet", classes=10)
    with pytest.raises(ValueError, match="weights"):
        apps.MobileNet(weights="/no/such/file.h5")
    with pytest.raises(TypeError, match="KerasTensor"):
        apps.VGG19(weights=None, include_top=False, input_tensor=np.zeros((1, 32, 32, 3)))


X = np.random.default_rng(1).uniform(0, 255, size=(2, 4, 4, 3)).astype(np.float32)


def test_preprocess_caffe():
    want = X[..., ::-1] - np.array([103.939, 116.779, 123.68], np.float32)
    np.testing.assert_allclose(apps.resnet50.preprocess_input(X.copy()), want, rtol=1e-6)
    np.testing.assert_allclose(apps.vgg16.preprocess_input(X.transpose(0, 3, 1, 2).copy(),
                                                           data_format="channels_first"),
                               want.transpose(0, 3, 1, 2), rtol=1e-6)


def test_preprocess_efficientnet_is_identity():
    assert apps.efficientnet.preprocess_input(X) is X


def test_preprocess_tf_and_torch():
    np.testing.assert_allclose(apps.mobilenet_v2.preprocess_input(X.copy()), X / 127.5 - 1, rtol=1e-6)
    np.testing.assert_allclose(apps.resnet_v2.preprocess_input(X.astype(np.uint8)),
                               X.astype(np.uint8) / 127.5 - 1, rtol=1e-6, atol=1e-6)
    torch = (X / 255 - np.array([0.485, 0.456, 0.406])) / np.array([0.229, 0.224, 0.225])
    np.testing.assert_allclose(imagenet_utils.preprocess_input(X.copy(), mode="torch"), torch,
                               rtol=1e-5)
    np.testing.assert_allclose(apps.densenet.preprocess_input(X.copy()), torch, rtol=1e-5)
    with pytest.raises(ValueError, match="mode"):
        imagenet_utils.preprocess_input(X, mode="bgr")


def test_decode_predictions(tmp_path, monkeypatch):
    """The class index json comes from the Keras cache (put there by hand here)."""
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    monkeypatch.setattr(imagenet_utils, "CLASS_INDEX", None)
    (tmp_path / "models").mkdir()
    import json  # noqa: PLC0415
    (tmp_path / "models" / "imagenet_class_index.json").write_text(
        json.dumps({str(i): [f"n{i:08d}", f"class{i}"] for i in range(1000)}))
    monkeypatch.setattr(imagenet_utils, "get_file",
                        lambda fname, origin, cache_subdir, file_hash: str(tmp_path / cache_subdir / fname))
    preds = np.zeros((1, 1000), np.float32)
    preds[0, [7, 3, 999]] = [0.5, 0.3, 0.2]
    assert apps.resnet50.decode_predictions(preds, top=2) == [[("n00000007", "class7", np.float32(0.5)),
                                                               ("n00000003", "class3", np.float32(0.3))]]
    with pytest.raises(ValueError, match=r"\(samples, 1000\)"):
        apps.vgg16.decode_predictions(preds[:, :10])


def test_imagenet_offline_error_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))

    def offline(*args, **kwargs):
        raise Exception("URL fetch failure: network is unreachable")
    monkeypatch.setattr(imagenet_utils, "get_file", offline)
    with pytest.raises(RuntimeError, match="vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5") as e:
        apps.VGG16(include_top=False)
    assert str(tmp_path / "models") in str(e.value)
