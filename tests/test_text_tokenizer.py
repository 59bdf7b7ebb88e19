"""`keras.preprocessing.text` (trainlib/text_tokenizer.py) and `pad_sequences`: word ranking,
the out-of-vocabulary id, num_words, matrices, JSON round trips.
(`tests/keras_compare/test_keras2_compat.py` compares with Keras's legacy Tokenizer.)"""
import numpy as np
import pytest

from trainlib.keras.preprocessing.sequence import pad_sequences
from trainlib.keras.preprocessing.text import (Tokenizer, hashing_trick, text_to_word_sequence,
                                               tokenizer_from_json)

TEXTS = ["b a a", "c b a", "d"]


def test_ranking_oov_and_num_words():
    t = Tokenizer(num_words=3, oov_token="?")
    t.fit_on_texts(TEXTS)
    assert t.word_index == {"?": 1, "a": 2, "b": 3, "c": 4, "d": 5}  # ties in first-seen order
    assert t.texts_to_sequences(["a b c z"]) == [[2, 1, 1, 1]]
    assert t.sequences_to_texts([[2, 3, 9]]) == ["a ? ?"]
    plain = Tokenizer()
    plain.fit_on_texts(TEXTS)
    assert plain.texts_to_sequences(["a z d"]) == [[1, 4]]
    assert text_to_word_sequence("Hi, there.") == ["hi", "there"]
    assert hashing_trick("x y", 5, "md5") == hashing_trick("x y", 5, "md5")
    assert all(1 <= i < 5 for i in hashing_trick("x y z", 5, "md5"))


def test_matrices_and_json():
    t = Tokenizer()
    t.fit_on_texts(TEXTS)
    counts = t.texts_to_matrix(["a a b"], mode="count")
    assert counts.shape == (1, 5) and counts[0].tolist() == [0, 2, 1, 0, 0]
    np.testing.assert_allclose(t.texts_to_matrix(["a a b"], mode="freq")[0, 1:3], [2 / 3, 1 / 3])
    tfidf = t.texts_to_matrix(["a a"], mode="tfidf")[0, 1]
    assert tfidf == pytest.approx((1 + np.log(2)) * np.log(1 + 3 / (1 + 2)))
    back = tokenizer_from_json(t.to_json())
    assert back.word_index == t.word_index and back.texts_to_sequences(["d a"]) == [[4, 1]]
    with pytest.raises(ValueError, match="mode"):
        t.texts_to_matrix(["a"], mode="onehot")


def test_pad_sequences():
    assert pad_sequences([[1, 2, 3], [4]], maxlen=2).tolist() == [[2, 3], [0, 4]]
    assert pad_sequences([[1, 2, 3], [4]], maxlen=2, truncating="post", padding="post",
                         value=-1).tolist() == [[1, 2], [4, -1]]
    assert pad_sequences([[1], []]).tolist() == [[1], [0]]
    assert pad_sequences([[0.5]], dtype="float32").dtype == np.float32
