"""tf.keras 2's `keras.preprocessing.text`: `Tokenizer` (word index by frequency, texts to id
sequences and to bag-of-words matrices), `text_to_word_sequence`, `one_hot`, `hashing_trick`.

Owns: pure-Python text bookkeeping on the host (no ops). Invariants: index 0 is never a
word; words are ranked by count, ties in first-seen order; the out-of-vocabulary token, when
given, is index 1; `num_words` keeps ids below it only when converting (the index keeps all).
"""
import collections
import hashlib
import json

import numpy as np

__all__ = ["Tokenizer", "text_to_word_sequence", "one_hot", "hashing_trick",
           "tokenizer_from_json"]

FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(input_text, filters=FILTERS, lower=True, split=" "):
    """The words of `input_text`: lower-cased, `filters` characters turned into `split`, empty
    pieces dropped.

    Example:
        >>> text_to_word_sequence("Hello, World!  again")
        ['hello', 'world', 'again']
    """
    text = input_text.lower() if lower else input_text
    text = text.translate({ord(c): split for c in filters})
    return [word for word in text.split(split) if word]


def hashing_trick(text, n, hash_function=None, filters=FILTERS, lower=True, split=" ",
                  analyzer=None):
    """Each word of `text` hashed to an id in [1, n) (`hash_function` "md5" is stable across
    runs; Python's `hash` of strings is not)."""
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        def hash_function(word):
            return int(hashlib.md5(word.encode()).hexdigest(), 16)
    words = analyzer(text) if analyzer is not None else \
        text_to_word_sequence(text, filters, lower, split)
    return [hash_function(w) % (n - 1) + 1 for w in words]


def one_hot(input_text, n, filters=FILTERS, lower=True, split=" ", analyzer=None):
    """`hashing_trick` with Python's `hash` (ids in [1, n), not one-hot vectors, as tf.keras 2)."""
    return hashing_trick(input_text, n, hash, filters, lower, split, analyzer)


class Tokenizer:
    """Turns texts into sequences of word ids, or into per-text vectors (tf.keras 2's).

    Args:
        num_words: keep only ids below this when converting (the most frequent words).
        filters, lower, split: how texts become words (`text_to_word_sequence`).
        char_level: every character is a token.
        oov_token: a token (index 1) standing for words outside the vocabulary.
        analyzer: a function text -> tokens used instead of the splitting above.

    Example:
        >>> t = Tokenizer(oov_token="<unk>")
        >>> t.fit_on_texts(["the cat sat", "the dog"])
        >>> t.word_index["the"], t.texts_to_sequences(["the bird sat"])
        (2, [[2, 1, 4]])
    """

    def __init__(self, num_words=None, filters=FILTERS, lower=True, split=" ", char_level=False,
                 oov_token=None, analyzer=None, **kwargs):
        if "nb_words" in kwargs:
            num_words = kwargs.pop("nb_words")
        document_count = kwargs.pop("document_count", 0)
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {kwargs}")
        self.num_words, self.filters, self.lower, self.split = num_words, filters, lower, split
        self.char_level, self.oov_token, self.analyzer = char_level, oov_token, analyzer
        self.document_count = document_count
        self.word_counts = collections.OrderedDict()
        self.word_docs = collections.defaultdict(int)
        self.index_docs = collections.defaultdict(int)
        self.word_index, self.index_word = {}, {}

    def _tokens(self, text):
        if self.char_level or isinstance(text, list):
            if not self.lower:
                return text
            return [t.lower() for t in text] if isinstance(text, list) else text.lower()
        if self.analyzer is not None:
            return self.analyzer(text)
        return text_to_word_sequence(text, self.filters, self.lower, self.split)

    def fit_on_texts(self, texts):
        """Counts the words of `texts` and (re)builds `word_index` by descending count."""
        for text in texts:
            self.document_count += 1
            tokens = self._tokens(text)
            for token in tokens:
                self.word_counts[token] = self.word_counts.get(token, 0) + 1
            for token in set(tokens):
                self.word_docs[token] += 1
        ranked = sorted(self.word_counts, key=lambda w: -self.word_counts[w])  # stable: ties
        vocabulary = ([self.oov_token] if self.oov_token is not None else []) + ranked
        self.word_index = {word: i for i, word in enumerate(vocabulary, 1)}
        self.index_word = {i: word for word, i in self.word_index.items()}
        for word, docs in self.word_docs.items():
            self.index_docs[self.word_index[word]] = docs

    def fit_on_sequences(self, sequences):
        """Counts, per id, the sequences it occurs in (for `tfidf` matrices)."""
        self.document_count += len(sequences)
        for seq in sequences:
            for i in set(seq):
                self.index_docs[i] += 1

    def _kept(self, i):
        return not (self.num_words and i >= self.num_words)

    def texts_to_sequences_generator(self, texts):
        """Yields each text as a list of word ids (unknown words: the oov id, or dropped)."""
        oov = self.word_index.get(self.oov_token)
        for text in texts:
            ids = []
            for token in self._tokens(text):
                i = self.word_index.get(token)
                if i is not None and self._kept(i):
                    ids.append(i)
                elif oov is not None:
                    ids.append(oov)
            yield ids

    def texts_to_sequences(self, texts):
        """Each text as a list of word ids."""
        return list(self.texts_to_sequences_generator(texts))

    def sequences_to_texts_generator(self, sequences):
        """Yields each id sequence as a text (words joined by spaces)."""
        oov = self.word_index.get(self.oov_token)
        for seq in sequences:
            words = []
            for i in seq:
                word = self.index_word.get(i)
                if word is not None and self._kept(i):
                    words.append(word)
                elif oov is not None:
                    words.append(self.index_word[oov])
            yield " ".join(words)

    def sequences_to_texts(self, sequences):
        """Each id sequence as a text."""
        return list(self.sequences_to_texts_generator(sequences))

    def texts_to_matrix(self, texts, mode="binary"):
        """A [len(texts), num_words] matrix (see `sequences_to_matrix`)."""
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode)

    def sequences_to_matrix(self, sequences, mode="binary"):
        """Per sequence, a vector over the ids: "binary" presence, "count", "freq" (count / length)
        or "tfidf" ((1 + log count) * log(1 + documents / (1 + documents with the id)))."""
        if mode not in ("binary", "count", "freq", "tfidf"):
            raise ValueError(f"Unknown vectorization mode: {mode!r}")
        size = self.num_words or (len(self.word_index) + 1 if self.word_index else None)
        if size is None:
            raise ValueError("Specify a dimension (`num_words` argument), or fit on some text "
                             "data first.")
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Fit the Tokenizer on some data before using tfidf mode.")
        out = np.zeros((len(sequences), size))
        for row, seq in enumerate(sequences):
            counts = collections.Counter(i for i in seq if i < size)
            for i, c in counts.items():
                if mode == "count":
                    out[row, i] = c
                elif mode == "freq":
                    out[row, i] = c / len(seq)
                elif mode == "binary":
                    out[row, i] = 1
                else:
                    out[row, i] = (1 + np.log(c)) * np.log(
                        1 + self.document_count / (1 + self.index_docs.get(i, 0)))
        return out

    def get_config(self):
        """The tokenizer's settings and counts (dict values JSON-encoded, as tf.keras 2)."""
        return {"num_words": self.num_words, "filters": self.filters, "lower": self.lower,
                "split": self.split, "char_level": self.char_level, "oov_token": self.oov_token,
                "document_count": self.document_count,
                "word_counts": json.dumps(self.word_counts),
                "word_docs": json.dumps(self.word_docs),
                "index_docs": json.dumps(self.index_docs),
                "word_index": json.dumps(self.word_index),
                "index_word": json.dumps(self.index_word)}

    def to_json(self, **kwargs):
        """The tokenizer as JSON text (`tokenizer_from_json` reads it back)."""
        return json.dumps({"class_name": type(self).__name__, "config": self.get_config()},
                          **kwargs)


def tokenizer_from_json(json_string):
    """The Tokenizer that `Tokenizer.to_json` wrote."""
    config = dict(json.loads(json_string).get("config", {}))
    tables = {key: json.loads(config.pop(key)) for key in
              ("word_counts", "word_docs", "index_docs", "word_index", "index_word")}
    tokenizer = Tokenizer(**config)
    tokenizer.word_counts = collections.OrderedDict(tables["word_counts"])
    tokenizer.word_docs = collections.defaultdict(int, tables["word_docs"])
    tokenizer.index_docs = collections.defaultdict(int, {int(k): v for k, v in
                                                         tables["index_docs"].items()})
    tokenizer.word_index = tables["word_index"]
    tokenizer.index_word = {int(k): v for k, v in tables["index_word"].items()}
    return tokenizer
