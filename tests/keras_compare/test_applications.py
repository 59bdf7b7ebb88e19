"""Keras 3 vs trainlib: `keras.applications` built with weights=None at a small input, Keras's
weights copied over with set_weights(get_weights()); the same (layer name, weight shapes)
list and the same predictions, and Keras-written weight files loaded through `weights=path`."""
import re

import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

RTOL, ATOL = 1e-4, 1e-5
X32 = np.random.default_rng(3).uniform(0, 255, size=(2, 32, 32, 3)).astype(np.float32)

# (builder name, kwargs): include_top=False at 32x32 (Keras's minimum), plus top cases
ARCHS = [
    ("ResNet50", dict(include_top=False, input_shape=(32, 32, 3))),
    ("ResNet50", dict(include_top=True, input_shape=(32, 32, 3), classes=5)),
    ("ResNet50V2", dict(include_top=False, input_shape=(32, 32, 3), pooling="avg")),
    ("VGG16", dict(include_top=True, input_shape=(32, 32, 3), classes=3)),
    ("VGG19", dict(include_top=False, input_shape=(32, 32, 3), pooling="max")),
    ("MobileNet", dict(include_top=True, input_shape=(32, 32, 3), classes=4)),
    ("MobileNet", dict(include_top=False, input_shape=(32, 32, 3), alpha=0.5)),
    ("MobileNetV2", dict(include_top=False, input_shape=(32, 32, 3), alpha=0.35)),
    ("MobileNetV2", dict(include_top=True, input_shape=(35, 35, 3), classes=6,
                         classifier_activation=None)),
    ("EfficientNetB0", dict(include_top=False, input_shape=(32, 32, 3))),
    ("EfficientNetB1", dict(include_top=True, input_shape=(33, 33, 3), classes=3)),
    ("DenseNet121", dict(include_top=True, input_shape=(32, 32, 3), classes=4)),
]
SLOW = [
    ("ResNet101", dict(include_top=False, input_shape=(32, 32, 3))),
    ("ResNet152V2", dict(include_top=False, input_shape=(32, 32, 3))),
    ("EfficientNetB7", dict(include_top=False, input_shape=(32, 32, 3), pooling="avg")),
    ("DenseNet201", dict(include_top=False, input_shape=(32, 32, 3), pooling="max")),
]


DEFAULT_NAMED = re.compile(r"(input_layer|zero_padding2d|rescaling|normalization|"
                           r"global_average_pooling2d|global_max_pooling2d|max_pooling2d)(_\d+)?")


def _layout(model):
    """(name, weight shapes) per layer; a layer named by default loses its `_N` suffix (the
    counters of both libraries depend on what the session built before)."""
    def name(layer):
        m = DEFAULT_NAMED.fullmatch(layer.name)
        return m.group(1) if m else layer.name
    return [(name(lay), [tuple(w.shape) for w in lay.weights]) for lay in model.layers]


def _pair(name, kwargs):
    km = getattr(keras.applications, name)(weights=None, **kwargs)
    tm = getattr(tl.keras.applications, name)(weights=None, **kwargs)
    assert _layout(tm) == _layout(km)
    assert tm.name == km.name
    tm.set_weights(km.get_weights())
    return km, tm


def _check(name, kwargs):
    km, tm = _pair(name, kwargs)
    x = X32 if kwargs["input_shape"][0] == 32 else np.resize(X32, (2,) + kwargs["input_shape"])
    x = getattr(keras.applications, _module(name)).preprocess_input(x.copy())
    np.testing.assert_allclose(tm.predict(x, verbose=0), np.asarray(km.predict(x, verbose=0)),
                               rtol=RTOL, atol=ATOL)


def _module(name):
    return {"ResNet50": "resnet50", "ResNet101": "resnet", "ResNet50V2": "resnet_v2",
            "ResNet152V2": "resnet_v2", "VGG16": "vgg16", "VGG19": "vgg19",
            "MobileNet": "mobilenet", "MobileNetV2": "mobilenet_v2", "EfficientNetB0": "efficientnet",
            "EfficientNetB1": "efficientnet", "EfficientNetB7": "efficientnet",
            "DenseNet121": "densenet", "DenseNet201": "densenet"}[name]


@pytest.mark.parametrize("name,kwargs", ARCHS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ARCHS)])
def test_same_layout_and_predictions(name, kwargs):
    _check(name, kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("name,kwargs", SLOW, ids=[n for n, _ in SLOW])
def test_deep_variants(name, kwargs):
    _check(name, kwargs)


@pytest.mark.parametrize("module", ["resnet50", "resnet_v2", "vgg16", "mobilenet", "mobilenet_v2",
                                    "densenet"])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_preprocess_input(module, data_format):
    x = np.random.default_rng(1).uniform(0, 255, size=(2, 5, 5, 3)).astype(np.float32)
    if data_format == "channels_first":
        x = x.transpose(0, 3, 1, 2).copy()
    want = getattr(keras.applications, module).preprocess_input(x.copy(), data_format=data_format)
    got = getattr(tl.keras.applications, module).preprocess_input(x.copy(), data_format=data_format)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)
    ints = x.astype(np.uint8)
    np.testing.assert_allclose(
        tl.keras.applications.imagenet_utils.preprocess_input(ints[0], data_format=data_format, mode="torch"),
        keras.applications.imagenet_utils.preprocess_input(ints[0], data_format=data_format, mode="torch"),
        rtol=1e-6, atol=1e-6)


def test_weights_from_keras_files(tmp_path):
    """Keras writes the weights (.weights.h5, and the legacy .h5 layout of the ImageNet files);
    trainlib's builder loads them through `weights=path`."""
    from keras.src.legacy.saving import legacy_h5_format  # noqa: PLC0415
    import h5py  # noqa: PLC0415

    kwargs = dict(include_top=True, input_shape=(32, 32, 3), classes=4, alpha=0.25)
    km = keras.applications.MobileNet(weights=None, **kwargs)
    km.set_weights([w + np.float32(0.01) for w in km.get_weights()])  # not the initial values
    new = tmp_path / "m.weights.h5"
    km.save_weights(new)
    legacy = tmp_path / "m.h5"
    with h5py.File(legacy, "w") as f:
        legacy_h5_format.save_weights_to_hdf5_group(f, km)
    want = np.asarray(km.predict(X32 / 127.5 - 1, verbose=0))
    for path in (new, legacy):
        tm = tl.keras.applications.MobileNet(weights=str(path), **kwargs)
        np.testing.assert_allclose(tm.predict(X32 / 127.5 - 1, verbose=0), want, rtol=RTOL, atol=ATOL)


def test_imagenet_without_network_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    import urllib.request  # noqa: PLC0415

    def offline(*args, **kwargs):
        raise OSError("network is unreachable")
    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(RuntimeError, match=r"resnet50_weights_tf_dim_ordering_tf_kernels_notop\.h5") as e:
        tl.keras.applications.ResNet50(include_top=False)
    assert str(tmp_path / "models") in str(e.value)
