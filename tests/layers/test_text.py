"""StringLookup and TextVectorization without TensorFlow: vocabularies from Python's Counter,
outputs from Python's own string functions, use in tl.function, Dataset.map, models, saving."""
import collections
import re

import numpy as np
import pytest

import trainlib as tl

CORPUS = ["The cat sat.", "the dog sat!", "A cat, a dog", "the end"]


def python_tokens(text):
    return re.sub(r"[^\w\s]", "", text.lower()).split()


def python_vocabulary(corpus):
    counts = collections.Counter(t for s in corpus for t in python_tokens(s))
    return [t for c, t in sorted(((c, t) for t, c in counts.items()), reverse=True)]


def test_vocabulary_and_int_output_match_python():
    tv = tl.layers.TextVectorization(output_sequence_length=5)
    tv.adapt(CORPUS)
    vocab = python_vocabulary(CORPUS)
    assert tv.get_vocabulary() == ["", "[UNK]"] + vocab
    index = {t: i + 2 for i, t in enumerate(vocab)}
    query = ["The DOG, sat", "zebra cat"]
    want = [[index.get(t, 1) for t in python_tokens(s)] for s in query]
    want = [row + [0] * (5 - len(row)) for row in want]
    assert tv(query).numpy().tolist() == want
    assert tv(query).dtype is tl.int64


def test_output_modes_count_and_multi_hot():
    tv = tl.layers.TextVectorization(output_mode="count")
    tv.adapt(tl.data.Dataset.from_tensor_slices(CORPUS).batch(3))
    vocab = tv.get_vocabulary()
    got = tv(["the the cat zebra"]).numpy()[0]
    want = np.zeros(len(vocab))
    for t in ["the", "the", "cat", "zebra"]:
        want[vocab.index(t) if t in vocab else 0] += 1
    np.testing.assert_array_equal(got, want)
    mh = tl.layers.TextVectorization(output_mode="multi_hot", vocabulary=vocab[1:])
    np.testing.assert_array_equal(mh(["the the cat zebra"]).numpy()[0], np.minimum(want, 1))
    idf = tl.layers.TextVectorization(output_mode="tf_idf")
    idf.adapt(CORPUS)
    docs = collections.Counter(t for s in CORPUS for t in set(python_tokens(s)))
    w = idf(["the"]).numpy()[0]
    assert w[idf.get_vocabulary().index("the")] == pytest.approx(np.log1p(4 / (1 + docs["the"])))


def test_ngrams_split_character_and_max_tokens():
    tv = tl.layers.TextVectorization(ngrams=2, max_tokens=5)
    tv.adapt(CORPUS)
    assert len(tv.get_vocabulary()) == 5 and tv.get_vocabulary()[:2] == ["", "[UNK]"]
    ch = tl.layers.TextVectorization(split="character", standardize=None, vocabulary=["a", "b"])
    assert ch(["ab", "ca"]).numpy().tolist() == [[2, 3], [1, 2]]


def test_string_lookup():
    layer = tl.layers.StringLookup(vocabulary=["a", "b"])
    assert layer(["a", "zz", "b"]).numpy().tolist() == [1, 0, 2]
    masked = tl.layers.StringLookup(vocabulary=["a"], mask_token="", num_oov_indices=2)
    got = masked(["", "a", "q"]).numpy().tolist()
    assert got[:2] == [0, 3] and got[2] in (1, 2)
    learned = tl.layers.StringLookup()
    learned.adapt(np.array(["x", "y", "y"]))
    assert learned.get_vocabulary() == ["[UNK]", "y", "x"]


def test_in_function_dataset_model_and_keras_file(tmp_path):
    tv = tl.layers.TextVectorization(output_sequence_length=4)
    tv.adapt(CORPUS)
    eager = tv(["the cat"]).numpy()
    assert (tl.function(lambda s: tv(s))(tl.constant(["the cat"])).numpy() == eager).all()
    mapped = list(tl.data.Dataset.from_tensor_slices(CORPUS).batch(2).map(tv))
    assert mapped[0].shape == (2, 4)
    inp = tl.layers.Input(shape=(1,), dtype="string")
    x = tl.layers.GlobalAveragePooling1D()(tl.layers.Embedding(tv.vocabulary_size(), 3)(tv(inp)))
    model = tl.Model(inp, tl.layers.Dense(1)(x))
    model.compile("adam", "mse")
    data = np.array([[s] for s in CORPUS])
    model.fit(data, np.ones((4, 1), np.float32), epochs=1, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = tl.saving.load_model(path)
    np.testing.assert_allclose(loaded.predict(data, verbose=0), model.predict(data, verbose=0))


def test_string_lookup_invert_round_trips_indices():
    forward = tl.layers.StringLookup(vocabulary=["a", "b", "c"], mask_token="")
    back = tl.layers.StringLookup(vocabulary=["a", "b", "c"], mask_token="", invert=True)
    ids = forward(tl.constant([["c", "zz", "a", ""]]))
    assert back(ids).numpy().tolist() == [[b"c", b"[UNK]", b"a", b""]]
    assert back(tl.constant([-1, 9])).numpy().tolist() == [b"[UNK]", b"[UNK]"]
    ragged = back(tl.ragged.constant([[2, 3], [4]], dtype=tl.int64))
    assert ragged.to_list() == [[b"a", b"b"], [b"c"]]
    with pytest.raises(ValueError, match="must be `'int'` when `invert`"):
        tl.layers.StringLookup(vocabulary=["a"], invert=True, output_mode="count")


def test_hashing_bins_are_fingerprints_of_the_text():
    from trainlib.graph.ops.farmhash import fingerprint64
    words = ["A", "bb", "", "héllo"]
    got = tl.layers.Hashing(num_bins=7)(tl.constant(words)).numpy().tolist()
    assert got == [fingerprint64(w.encode()) % 7 for w in words]
    ints = tl.layers.Hashing(num_bins=5, mask_value=0)(tl.constant([[0, 12, -3]])).numpy()
    assert ints.tolist() == [[0] + [fingerprint64(s) % 4 + 1 for s in (b"12", b"-3")]]
    hot = tl.layers.Hashing(num_bins=4, output_mode="count")(tl.constant([["a", "a", "b"]]))
    assert hot.numpy().sum() == 3 and hot.numpy().max() >= 2
    salted = tl.layers.Hashing(num_bins=9, salt=[1, 2])(tl.constant(["x"]))
    assert salted.numpy().tolist() == tl.strings.to_hash_bucket_strong(["x"], 9, [1, 2]).numpy().tolist()


def test_learned_vocabularies_are_keras_assets(tmp_path):
    import zipfile
    tv = tl.layers.TextVectorization(output_mode="tf_idf", name="tv")
    tv.adapt(CORPUS)
    lookup = tl.layers.StringLookup(name="lookup")
    lookup.adapt(np.array(["x", "y", "y"]))
    given = tl.layers.StringLookup(vocabulary=["p", "q"], name="given")
    inp = tl.layers.Input(shape=(1,), dtype="string")
    hashed = tl.layers.Hashing(num_bins=8, salt=3, output_mode="one_hot", name="hash")(inp)
    model = tl.Model(inp, [tv(inp), lookup(inp), given(inp), hashed])
    assert model.get_layer("tv").get_config()["vocabulary"] is None   # not in the config
    path = str(tmp_path / "m.keras")
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        # at the layer's weights path, as Keras 3 writes assets
        vocabulary = archive.read("assets/layers/text_vectorization/vocabulary.txt").decode()
    assert vocabulary.split("\n") == tv.get_vocabulary()
    assert "assets/layers/string_lookup/vocabulary.txt" in names
    # `given`'s vocabulary is in its config
    assert sorted(n for n in names if n.startswith("assets/")) == [
        "assets/layers/string_lookup/vocabulary.txt",
        "assets/layers/text_vectorization/idf_weights.txt",
        "assets/layers/text_vectorization/vocabulary.txt"]
    loaded = tl.saving.load_model(path)
    assert loaded.get_layer("tv").get_vocabulary() == tv.get_vocabulary()
    assert loaded.get_layer("lookup").get_vocabulary() == ["[UNK]", "y", "x"]
    assert loaded.get_layer("hash").get_config() == model.get_layer("hash").get_config()
    data = np.array([["the cat"], ["y"], ["q"]])
    for a, b in zip(loaded.predict(data, verbose=0), model.predict(data, verbose=0)):
        np.testing.assert_allclose(a, b)
    # an archive of trainlib's earlier form (assets/<layer names>/) still loads
    old = str(tmp_path / "old.keras")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(old, "w") as dst:
        for name in src.namelist():
            renamed = name.replace("assets/layers/text_vectorization/", "assets/tv/") \
                .replace("assets/layers/string_lookup/", "assets/lookup/")
            dst.writestr(renamed, src.read(name))
    again = tl.saving.load_model(old)
    assert again.get_layer("tv").get_vocabulary() == tv.get_vocabulary()
    assert again.get_layer("lookup").get_vocabulary() == ["[UNK]", "y", "x"]


def test_a_vocabulary_given_as_a_file_path_is_read_one_token_a_line(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("cat\ndog\nbird\n", encoding="utf-8")
    lookup = tl.keras.layers.StringLookup(vocabulary=str(path))
    assert lookup.get_vocabulary() == ["[UNK]", "cat", "dog", "bird"]   # not the path's letters
    np.testing.assert_array_equal(lookup(tl.constant(["dog", "fish"])).numpy(), [2, 0])
    vectorize = tl.keras.layers.TextVectorization(vocabulary=str(path))
    assert vectorize.get_vocabulary() == ["", "[UNK]", "cat", "dog", "bird"]
    ints = tmp_path / "ints.txt"
    ints.write_text("7\n3\n")
    assert tl.keras.layers.IntegerLookup(vocabulary=str(ints)).get_vocabulary() == [-1, 7, 3]
    with pytest.raises(ValueError, match="does not exist"):
        tl.keras.layers.StringLookup(vocabulary=str(tmp_path / "missing.txt"))
