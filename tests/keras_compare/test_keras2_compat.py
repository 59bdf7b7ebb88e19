"""tf.keras 2 compatibility against Keras 3.15 (which still ships tf.keras 2's image
augmentation as `keras.src.legacy.preprocessing.image`): affine warps, standardization and
`flow` batches equal Keras's; the loss functions by their tf.keras 2 names give Keras's
values; `keras.backend` answers as Keras's.
"""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

from trainlib import keras as tk  # noqa: E402
from trainlib.image_generator import apply_affine_transform  # noqa: E402

legacy = pytest.importorskip("keras.src.legacy.preprocessing.image")

X = np.random.default_rng(0).uniform(0, 1, (9, 11, 3))
TRANSFORMS = [dict(theta=25), dict(tx=2.5, ty=-1.3), dict(shear=12), dict(zx=0.8, zy=1.3),
              dict(theta=-40, tx=1, zx=1.2, shear=5)]


@pytest.mark.parametrize("fill_mode", ["nearest", "constant", "reflect"])
@pytest.mark.parametrize("kw", TRANSFORMS, ids=repr)
def test_affine_transform_matches_keras(fill_mode, kw):
    for axes in (dict(row_axis=0, col_axis=1, channel_axis=2),
                 dict(row_axis=1, col_axis=2, channel_axis=0)):
        x = X if axes["channel_axis"] == 2 else X.transpose(2, 0, 1)
        want = legacy.apply_affine_transform(x, fill_mode=fill_mode, cval=0.3, **axes, **kw)
        got = apply_affine_transform(x, fill_mode=fill_mode, cval=0.3, **axes, **kw)
        np.testing.assert_allclose(got, want, atol=1e-9)


def test_generator_transforms_and_standardization_match_keras():
    kwargs = dict(rotation_range=20, width_shift_range=0.2, height_shift_range=2,
                  shear_range=8, zoom_range=0.15, horizontal_flip=True, vertical_flip=True,
                  fill_mode="reflect", rescale=1 / 255, samplewise_center=True,
                  samplewise_std_normalization=True, featurewise_center=True)
    ours, theirs = tk.preprocessing.image.ImageDataGenerator(**kwargs), \
        legacy.ImageDataGenerator(**kwargs)
    data = np.random.default_rng(1).uniform(0, 255, (6, 9, 11, 3)).astype(np.float32)
    ours.fit(data)
    theirs.fit(data)
    np.testing.assert_allclose(ours.mean, theirs.mean, rtol=1e-5)
    for seed in range(4):
        p_ours = ours.get_random_transform(data[0].shape, seed=seed)
        p_theirs = theirs.get_random_transform(data[0].shape, seed=seed)
        assert p_ours.keys() == p_theirs.keys()
        for key in p_ours:
            assert np.allclose(p_ours[key] or 0, p_theirs[key] or 0), key
        np.testing.assert_allclose(
            ours.standardize(ours.apply_transform(data[seed].copy(), p_ours)),
            theirs.standardize(theirs.apply_transform(data[seed].copy(), p_theirs)), atol=1e-4)
    np.random.seed(5)
    b_ours = ours.flow(data, np.arange(6), batch_size=4, seed=7, shuffle=True)[0]
    np.random.seed(5)
    b_theirs = theirs.flow(data, np.arange(6), batch_size=4, seed=7, shuffle=True)[0]
    np.testing.assert_array_equal(b_ours[1], b_theirs[1])
    np.testing.assert_allclose(b_ours[0], b_theirs[0], atol=1e-4)


LOSS_NAMES = ["mean_squared_logarithmic_error", "kl_divergence", "hinge", "squared_hinge",
              "categorical_hinge", "log_cosh", "poisson", "cosine_similarity",
              "mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error"]


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_loss_functions_match_keras(name):
    rng = np.random.default_rng(2)
    y_true = rng.uniform(0, 1, (4, 5)).astype(np.float32)
    y_pred = rng.uniform(0.01, 1, (4, 5)).astype(np.float32)
    binary = (rng.uniform(size=(4, 5)) > 0.5).astype(np.float32)
    for t in (y_true, binary):
        np.testing.assert_allclose(getattr(tk.losses, name)(t, y_pred).numpy(),
                                   np.asarray(getattr(keras.losses, name)(t, y_pred)),
                                   rtol=1e-5, atol=1e-6)
    cls = keras.losses.get(name).__name__ if hasattr(keras.losses.get(name), "__name__") else name
    assert tk.losses.get(name) is getattr(tk.losses, cls, tk.losses.get(name))


@pytest.mark.parametrize("cls", ["MeanSquaredLogarithmicError", "KLDivergence", "Hinge",
                                 "SquaredHinge", "CategoricalHinge", "LogCosh", "Poisson",
                                 "CosineSimilarity"])
def test_loss_classes_match_keras(cls):
    rng = np.random.default_rng(3)
    y_true = rng.uniform(0, 1, (6, 3)).astype(np.float32)
    y_pred = rng.uniform(0.01, 1, (6, 3)).astype(np.float32)
    weights = rng.uniform(0, 1, 6).astype(np.float32)
    ours, theirs = getattr(tk.losses, cls)(), getattr(keras.losses, cls)()
    assert ours.name == theirs.name
    np.testing.assert_allclose(float(ours(y_true, y_pred, weights)),
                               float(theirs(y_true, y_pred, weights)), rtol=1e-5)


def test_backend_answers_as_keras():
    for name in ("floatx", "epsilon", "image_data_format", "backend"):
        assert getattr(tk.backend, name)() == getattr(keras.backend, name)() or name == "backend"
    for pair in (("int32", "float32"), ("int8", "uint8"), ("float16", "float32"), ("bool", "int8")):
        assert tk.backend.result_type(*pair) == keras.backend.result_type(*pair), pair
    assert [n for n in dir(keras.backend) if not n.startswith("_")
            and not hasattr(tk.backend, n)] == []


@pytest.mark.parametrize("cls", ["MeanAbsolutePercentageError", "MeanSquaredLogarithmicError",
                                 "KLDivergence", "Hinge", "SquaredHinge", "CategoricalHinge",
                                 "LogCoshError", "Poisson", "CosineSimilarity",
                                 "BinaryCrossentropy", "CategoricalCrossentropy"])
def test_metric_classes_match_keras(cls):
    rng = np.random.default_rng(4)
    ours, theirs = getattr(tk.metrics, cls)(), getattr(keras.metrics, cls)()
    for _ in range(2):
        y_true = rng.uniform(0, 1, (5, 4)).astype(np.float32)
        y_pred = rng.uniform(0.01, 1, (5, 4)).astype(np.float32)
        ours.update_state(y_true, y_pred)
        theirs.update_state(y_true, y_pred)
    assert ours.name == theirs.name
    np.testing.assert_allclose(float(ours.result()), float(theirs.result()), rtol=1e-5)
    assert getattr(tk.metrics, theirs.name, None) is None or callable(getattr(tk.metrics,
                                                                              theirs.name))


@pytest.mark.parametrize("kw", [dict(), dict(num_words=5, oov_token="<oov>"),
                                dict(char_level=True), dict(lower=False, num_words=4)], ids=repr)
def test_tokenizer_matches_keras(kw):
    from keras.src.legacy.preprocessing import text as keras_text  # noqa: PLC0415
    texts = ["The cat sat on the mat.", "The dog ate my homework!", "cat and dog",
             "A b c d e f the cat"]
    query = ["the cat ate the mat and a bird", "zzz dog"]
    theirs, ours = keras_text.Tokenizer(**kw), tk.preprocessing.text.Tokenizer(**kw)
    theirs.fit_on_texts(texts)
    ours.fit_on_texts(texts)
    assert ours.word_index == theirs.word_index
    assert ours.texts_to_sequences(query) == theirs.texts_to_sequences(query)
    assert ours.sequences_to_texts(ours.texts_to_sequences(query)) == \
        theirs.sequences_to_texts(theirs.texts_to_sequences(query))
    for mode in ("binary", "count", "freq", "tfidf"):
        np.testing.assert_allclose(ours.texts_to_matrix(query, mode),
                                   theirs.texts_to_matrix(query, mode))
    loaded = keras_text.tokenizer_from_json(ours.to_json())
    assert loaded.texts_to_sequences(query) == ours.texts_to_sequences(query)
    assert tk.preprocessing.sequence.pad_sequences([[1, 2, 3], [4]], maxlen=2,
                                                   padding="post").tolist() == \
        keras.utils.pad_sequences([[1, 2, 3], [4]], maxlen=2, padding="post").tolist()
