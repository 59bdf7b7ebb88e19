"""Keras 3 vs trainlib for the augmentation layers (geometric, colour, mixing): given the
transformation Keras draws (`get_random_transformation`), trainlib's `transform_images` (and
`transform_labels`) give Keras's `transform_images` outputs, eagerly and inside tl.function,
channels_last and channels_first; configs equal Keras's and survive from_config."""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import close  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

# name -> (constructor over a layers module, data formats Keras itself handles)
BOTH, LAST = ("channels_last", "channels_first"), ("channels_last",)
LAYERS = {
    "RandomShear": (lambda L, df: L.RandomShear(0.4, (0.1, 0.3), fill_mode="constant",
                                                data_format=df, seed=1), BOTH),
    "RandomShear_reflect_nearest": (lambda L, df: L.RandomShear(0.5, interpolation="nearest",
                                                                data_format=df), BOTH),
    "RandomPerspective": (lambda L, df: L.RandomPerspective(0.7, 0.5, data_format=df, seed=2),
                          BOTH),
    # Keras's own RandomErasing and CutMix break on channels_first (their masks' repeat)
    "RandomErasing": (lambda L, df: L.RandomErasing(data_format=df, seed=3), LAST),
    "RandomErasing_fill": (lambda L, df: L.RandomErasing(0.8, (0.1, 0.5), fill_value=7.0,
                                                         data_format=df), LAST),
    "RandomGaussianBlur": (lambda L, df: L.RandomGaussianBlur(kernel_size=(3, 5),
                                                              sigma=(0.5, 1.0),
                                                              data_format=df, seed=4), BOTH),
    "RandomGrayscale": (lambda L, df: L.RandomGrayscale(0.5, data_format=df, seed=5), BOTH),
    "RandomHue": (lambda L, df: L.RandomHue(0.8, data_format=df, seed=6), BOTH),
    "RandomSaturation": (lambda L, df: L.RandomSaturation(0.6, data_format=df, seed=7), BOTH),
    "RandomColorDegeneration": (lambda L, df: L.RandomColorDegeneration(0.7, data_format=df),
                                BOTH),
    "RandomInvert": (lambda L, df: L.RandomInvert(0.6, data_format=df, seed=9), BOTH),
    "RandomPosterization": (lambda L, df: L.RandomPosterization((2, 7), data_format=df), BOTH),
    "RandomSharpness": (lambda L, df: L.RandomSharpness(0.8, data_format=df, seed=11), BOTH),
    "Solarization": (lambda L, df: L.Solarization(0.3, (0.2, 0.8), seed=12), LAST),
    "AutoContrast": (lambda L, df: L.AutoContrast(value_range=(0, 255)), LAST),
    "Equalization": (lambda L, df: L.Equalization(bins=64, data_format=df), BOTH),
    "MixUp": (lambda L, df: L.MixUp(0.4, data_format=df, seed=13), BOTH),
    "CutMix": (lambda L, df: L.CutMix(0.8, data_format=df, seed=14), LAST),
}


def _images(df):
    x = np.random.default_rng(0).uniform(0, 255, size=(3, 9, 7, 3)).astype(np.float32)
    x[1, :, :4] = 17.0      # flat patches: equalization, autocontrast and blur edge cases
    return x if df == "channels_last" else np.transpose(x, (0, 3, 1, 2)).copy()


def _numpy(transformation):
    if isinstance(transformation, dict):
        return {k: np.asarray(v) for k, v in transformation.items()}
    return None if transformation is None else np.asarray(transformation)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_transform_images_match_keras_for_keras_draws(name):
    make, formats = LAYERS[name]
    for df in formats:
        x = _images(df)
        klayer, tlayer = make(keras.layers, df), make(tl.keras.layers, df)
        drawn = klayer.get_random_transformation(tf.constant(x), training=True)
        want = np.asarray(klayer.transform_images(tf.constant(x), drawn, training=True))
        given = _numpy(drawn)
        close(want, tlayer.transform_images(tl.constant(x), given, training=True).numpy(),
              f"{name} {df} eager", 1e-4, 2e-3)
        graph = tl.function(lambda t: tlayer.transform_images(t, given, training=True))
        close(want, graph(tl.constant(x)).numpy(), f"{name} {df} graph", 1e-4, 2e-3)
        if name in ("MixUp", "CutMix"):
            labels = np.eye(3, dtype=np.float32)[[0, 2, 1]]
            kl = np.asarray(klayer.transform_labels(tf.constant(labels), drawn, training=True))
            close(kl, tlayer.transform_labels(tl.constant(labels), given).numpy(),
                  f"{name} labels")
        # inference: only a cast (AutoContrast always applies, as Keras's)
        off = tlayer(tl.constant(x), training=False).numpy()
        if name == "AutoContrast":
            close(np.asarray(klayer(tf.constant(x), training=False)), off, "AutoContrast")
        else:
            np.testing.assert_array_equal(off, x)
    kconfig, tconfig = klayer.get_config(), tlayer.get_config()
    kconfig.pop("name"), tconfig.pop("name")
    assert tconfig == kconfig
    again = type(tlayer).from_config(tlayer.get_config())
    assert again.get_config() == tlayer.get_config()


@pytest.mark.parametrize("name", ["RandomShear", "RandomHue", "MixUp", "AutoContrast"])
def test_single_images_and_functional_shapes_match_keras(name):
    make = LAYERS[name][0]
    x = _images("channels_last")[0]
    assert tuple(make(tl.keras.layers, None)(x).shape) == \
        tuple(make(keras.layers, None)(x).shape)
    outs = []
    for k in (keras, tl.keras):
        outs.append(tuple(make(k.layers, None)(k.Input((9, 7, 3))).shape))
    assert outs[1] == outs[0]


def test_color_jitter_matches_keras_with_fixed_factors():
    # fixed draws (a pair of equal numbers) make the composition comparable; Keras's own
    # layer handles channels_last only
    def make(L):
        return L.RandomColorJitter(brightness_factor=(0.2, 0.2), saturation_factor=(0.7, 0.7),
                                   hue_factor=(0.0, 0.0))
    x = _images("channels_last")
    klayer, tlayer = make(keras.layers), make(tl.keras.layers)
    close(np.asarray(klayer(tf.constant(x))), tlayer(tl.constant(x)).numpy(), "jitter", 1e-4,
          2e-3)
    np.testing.assert_array_equal(tlayer(x, training=False).numpy(), x)
    kconfig, tconfig = klayer.get_config(), tlayer.get_config()
    kconfig.pop("name"), tconfig.pop("name")
    assert tconfig == kconfig
    again = type(tlayer).from_config(tlayer.get_config()).get_config()
    again.pop("name")
    assert again == tconfig
