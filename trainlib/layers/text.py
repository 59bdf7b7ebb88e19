"""Text preprocessing layers: `StringLookup` (strings -> indices) and `TextVectorization`
(standardize, split, ngrams, lookup, encode), as Keras 3's.

Owns: vocabulary learning (`adapt`: tokens sorted by count, ties by the token, descending,
as Keras), the index layout (mask index 0 when there is a mask token, then the OOV
indices, then the vocabulary), and the output modes int / multi_hot / count / tf_idf.
Invariants: the vocabulary is fixed between `adapt` calls; the lookup is one
`LookupTableFind` op, so the layers work eagerly, inside `tl.function`, in `Dataset.map`.
Saving, as Keras 3: a vocabulary given to the constructor is in the config; a learned (or
set) one is an asset, `vocabulary.txt` (one token a line, special tokens first) written by
`save_assets` and read by `load_assets` (with `idf_weights.txt` in tf_idf mode).
"""
import collections
import os

import numpy as np

from ..file_io import read_lines
from ..graph import dtypes as _dt
from ..graph.op import convert_to_tensor
from ..graph.ops import array as _array
from ..graph.ops import math as _math
from ..graph.ops import strings as _strings
from ..graph.ops.ragged import RaggedTensor
from ..graph.tensor import SymbolicTensor, is_tensor
from .base import Layer, register

_PUNCTUATION = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'
_MODES = ("int", "multi_hot", "count", "tf_idf")


def _text_batches(data):
    """The numpy arrays of strings in `data` (an array, list, tensor or Dataset)."""
    if hasattr(data, "as_numpy_iterator") or hasattr(data, "_make_iterator"):
        for batch in data:
            yield np.asarray(batch.numpy() if is_tensor(batch) else batch)
    else:
        yield np.asarray(convert_to_tensor(data).numpy()) if not is_tensor(data) else \
            np.asarray(data.numpy())


def _flat_tokens(tokens):
    """Python list of the token bytes of a tensor or RaggedTensor."""
    if isinstance(tokens, RaggedTensor):
        tokens = tokens.flat_values
    return np.asarray(tokens.numpy()).reshape(-1).tolist()


class _Lookup(Layer):
    """What StringLookup and TextVectorization share: the vocabulary and the encoding."""

    def _init_lookup(self, max_tokens, num_oov_indices, mask_token, oov_token, output_mode,
                     sparse=False):
        if output_mode not in _MODES:
            raise ValueError(f"output_mode must be one of {_MODES}, got {output_mode!r}")
        if sparse:
            raise NotImplementedError("sparse outputs are not supported yet")
        self.max_tokens = max_tokens
        self.num_oov_indices = int(num_oov_indices)
        self.mask_token = mask_token
        self.oov_token = oov_token
        self.output_mode = output_mode
        self._tokens = []
        self._idf = None
        self._table = None
        self._input_vocabulary = None   # what the constructor was given (the config holds it)
        self._input_idf = None

    def _set_input_vocabulary(self, vocabulary, idf_weights):
        if isinstance(vocabulary, (str, os.PathLike)):   # a file, one token a line (Keras)
            vocabulary = read_lines(os.fspath(vocabulary), self.name)
        if vocabulary is not None:
            self._input_vocabulary = [t.decode("utf-8") if isinstance(t, bytes) else str(t)
                                      for t in vocabulary]
            self._input_idf = None if idf_weights is None else \
                np.asarray(idf_weights, np.float32).tolist()
            self.set_vocabulary(vocabulary, idf_weights)

    def save_assets(self, dir_path):
        """Writes a learned vocabulary to `dir_path/vocabulary.txt` (special tokens first, one
        token a line; tf_idf weights to `idf_weights.txt`), as Keras 3; nothing when the
        constructor's vocabulary is in the config."""
        if self._input_vocabulary is not None:
            return
        with open(os.path.join(dir_path, "vocabulary.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(self.get_vocabulary(include_special_tokens=True)))
        if self._idf is not None:
            with open(os.path.join(dir_path, "idf_weights.txt"), "w", encoding="utf-8") as f:
                f.write("\n".join(repr(float(w)) for w in self._idf))

    def load_assets(self, dir_path):
        """Reads the vocabulary `save_assets` wrote (nothing to read when the config has it)."""
        if self._input_vocabulary is not None:
            return
        with open(os.path.join(dir_path, "vocabulary.txt"), encoding="utf-8") as f:
            lines = f.read().split("\n")
        idf = None
        path = os.path.join(dir_path, "idf_weights.txt")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                idf = [float(w) for w in f.read().split("\n") if w]
        if lines == [""] and not self._special():
            lines = []
        self.set_vocabulary(lines, idf)

    def _special(self):
        return ([self.mask_token] if self.mask_token is not None else []) + \
            [self.oov_token] * self.num_oov_indices

    def get_vocabulary(self, include_special_tokens=True):
        """The tokens by index (mask and OOV tokens first when `include_special_tokens`)."""
        return (self._special() if include_special_tokens else []) + list(self._tokens)

    def vocabulary_size(self):
        """The number of indices the layer outputs: special tokens plus the vocabulary."""
        return len(self._special()) + len(self._tokens)

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Sets the vocabulary (a list of tokens, without the special tokens or with them first;
        or the path of a file of one token a line)."""
        if isinstance(vocabulary, (str, os.PathLike)):
            vocabulary = read_lines(os.fspath(vocabulary), self.name)
        tokens = [t.decode("utf-8") if isinstance(t, bytes) else str(t) for t in vocabulary]
        special = self._special()
        if tokens[:len(special)] == special:
            tokens = tokens[len(special):]
        self._tokens = tokens
        self._idf = None if idf_weights is None else np.asarray(idf_weights, np.float32)
        self._table = tuple(tokens)

    def _learn(self, token_rows, document_count):
        counts = collections.Counter()
        documents = collections.Counter()
        for row in token_rows:
            counts.update(row)
            documents.update(set(row))
        special = {s.encode("utf-8") for s in self._special()}
        items = [(c, t) for t, c in counts.items() if t not in special]
        items.sort(reverse=True)  # by count, ties by the token, both descending (as Keras)
        room = None if self.max_tokens is None else self.max_tokens - len(self._special())
        items = items[:room] if room is not None else items
        tokens = [t.decode("utf-8") for _, t in items]
        idf = None
        if self.output_mode == "tf_idf":
            learned = np.log1p(document_count / (1 + np.array([documents[t] for _, t in items])))
            idf = np.concatenate([[learned.mean() if learned.size else 0.0] *
                                  len(self._special()), learned]).astype(np.float32)
        self.set_vocabulary(tokens, idf)

    def _encode(self, tokens):
        """Indices (int mode) or per-row vectors of the tokens (a tensor or RaggedTensor)."""
        table = self._table
        if table is None:
            if not isinstance(tokens.flat_values if isinstance(tokens, RaggedTensor) else tokens,
                              SymbolicTensor):
                raise ValueError(f"{self.name}: the layer has no vocabulary; call adapt() first "
                                 "or pass vocabulary=")
            table = ()  # built before its vocabulary is set (a model being loaded): all OOV
        mask = self.mask_token
        if isinstance(tokens, RaggedTensor):
            ids = tokens.with_flat_values(_strings.lookup(tokens.flat_values, table,
                                                          self.num_oov_indices, mask))
        else:
            ids = _strings.lookup(tokens, table, self.num_oov_indices, mask)
        if self.output_mode == "int":
            return ids
        if not isinstance(ids, RaggedTensor):
            ids = RaggedTensor.from_tensor(ids) if ids.shape.rank == 2 else \
                RaggedTensor.from_row_lengths(ids, [ids.shape[0]])
        depth = self.max_tokens if getattr(self, "pad_to_max_tokens", False) and self.max_tokens \
            else self.vocabulary_size()
        counts = _strings.token_counts(ids.values, ids.row_splits, depth)
        if self.output_mode == "multi_hot":
            return _math.minimum(counts, 1.0)
        if self.output_mode == "tf_idf":
            idf = np.zeros(depth, np.float32)
            if self._idf is not None:  # (none yet while a model being loaded is built)
                idf[:len(self._idf)] = self._idf[:depth]
            return counts * convert_to_tensor(idf)
        return counts


@register
class StringLookup(_Lookup):
    """Maps strings to int64 indices from a vocabulary (given, or learned with `adapt`).

    Index layout as Keras: the mask token (if any) at 0, then `num_oov_indices` OOV
    indices, then the vocabulary.

    Example:
        >>> layer = tl.layers.StringLookup(vocabulary=["a", "b"])
        >>> layer(["a", "c", "b"]).numpy()
        array([1, 0, 2])
    """

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]",
                 vocabulary=None, idf_weights=None, invert=False, output_mode="int",
                 sparse=False, pad_to_max_tokens=False, encoding="utf-8", name=None, **kwargs):
        for key in ("vocabulary_size", "vocabulary_dtype"):  # in Keras's config, implied here
            kwargs.pop(key, None)
        if kwargs.pop("oov_method", "floormod") != "floormod" or kwargs.pop("salt", None):
            raise NotImplementedError("StringLookup supports only oov_method='floormod' unsalted")
        super().__init__(name=name, **kwargs)
        if invert and output_mode != "int":
            raise ValueError("`output_mode` must be `'int'` when `invert` is true. Received: "
                             f"output_mode={output_mode}")
        self.invert = bool(invert)
        self.encoding = encoding
        self._init_lookup(max_tokens, num_oov_indices, mask_token, oov_token, output_mode, sparse)
        self.pad_to_max_tokens = pad_to_max_tokens
        self._set_input_vocabulary(vocabulary, idf_weights)

    def adapt(self, data, steps=None, batch_size=None):
        """Learns the vocabulary from `data` (strings: array, list, tensor or Dataset)."""
        rows = []
        for batch in _text_batches(data):
            flat = [v.encode("utf-8") if isinstance(v, str) else v
                    for v in np.asarray(batch, dtype=object).reshape(-1)]
            rows += [[t] for t in flat]
        self._learn(rows, len(rows))

    def call(self, inputs):
        if self.invert:
            return self._decode(inputs)
        return self._encode(inputs)

    def _decode(self, inputs):
        """invert=True: indices back to tokens (special tokens included); an index outside the
        vocabulary gives the OOV token."""
        if isinstance(inputs, RaggedTensor):
            return inputs.with_flat_values(self._decode(inputs.flat_values))
        x = _math.cast(convert_to_tensor(inputs), _dt.int64)
        vocabulary = self.get_vocabulary() if self._table is not None else self._special()
        table = np.empty(max(len(vocabulary), 1), dtype=object)
        table[:] = [t.encode("utf-8") for t in vocabulary] or [self.oov_token.encode("utf-8")]
        picked = _array.gather(convert_to_tensor(table), _math.minimum(
            _math.maximum(x, 0), len(table) - 1))
        inside = _math.logical_and(_math.greater_equal(x, 0), _math.less(x, len(vocabulary)))
        return _math.where(inside, picked, convert_to_tensor(self.oov_token, dtype=_dt.string))

    def get_config(self):
        config = super().get_config()
        config.update(invert=self.invert, max_tokens=self.max_tokens,
                      num_oov_indices=self.num_oov_indices, mask_token=self.mask_token,
                      oov_token=self.oov_token, output_mode=self.output_mode, sparse=False,
                      vocabulary=self._input_vocabulary, pad_to_max_tokens=self.pad_to_max_tokens,
                      idf_weights=self._input_idf, encoding=self.encoding,
                      vocabulary_size=self.vocabulary_size(), oov_method="floormod", salt=None)
        return config


@register
class TextVectorization(_Lookup):
    """Turns raw strings into token indices or vectors: standardize, split, ngrams, lookup.

    Args:
        max_tokens: the vocabulary's size limit, special tokens included.
        standardize: `"lower_and_strip_punctuation"` (default), `"lower"`,
            `"strip_punctuation"`, None, or a callable on a string tensor.
        split: `"whitespace"` (default), `"character"`, None, or a callable.
        ngrams: None, an int n (all widths 1..n) or a tuple of widths.
        output_mode: `"int"`, `"multi_hot"`, `"count"` or `"tf_idf"`.
        output_sequence_length: in int mode, pad or cut every row to this length.
        vocabulary: a list of tokens instead of `adapt`.

    Example:
        >>> tv = tl.layers.TextVectorization(output_sequence_length=3)
        >>> tv.adapt(["the cat", "the dog sat"])
        >>> tv(["the cat"]).numpy()
        array([[2, 4, 0]])
    """

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation",
                 split="whitespace", ngrams=None, output_mode="int", output_sequence_length=None,
                 pad_to_max_tokens=False, vocabulary=None, idf_weights=None, sparse=False,
                 ragged=False, encoding="utf-8", name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        if isinstance(ngrams, int):
            ngrams = tuple(range(1, ngrams + 1))
        self._init_lookup(max_tokens, 1, "" if output_mode == "int" else None, "[UNK]",
                          output_mode, sparse)
        self.standardize = standardize
        self.split = split
        self.ngrams = ngrams
        self.output_sequence_length = output_sequence_length
        self.pad_to_max_tokens = pad_to_max_tokens
        self.ragged = ragged
        self._set_input_vocabulary(vocabulary, idf_weights)

    def _preprocess(self, inputs):
        x = inputs if isinstance(inputs, RaggedTensor) else convert_to_tensor(inputs)
        if self.standardize in ("lower", "lower_and_strip_punctuation"):
            x = _strings.lower(x)
        if self.standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            x = _strings.regex_replace(x, _PUNCTUATION, "")
        if callable(self.standardize):
            x = self.standardize(x)
        if self.split is not None:
            if x.shape.rank is not None and x.shape.rank > 1:
                if x.shape[-1] != 1:
                    raise ValueError("When using TextVectorization to tokenize strings, the input "
                                     f"rank must be 1 or the last dimension 1; got {x.shape}")
                x = _array.squeeze(x, axis=-1)
            if self.split == "whitespace":
                x = _strings.split(x)
            elif self.split == "character":
                x = _strings.unicode_split(x, "UTF-8")
            elif callable(self.split):
                x = self.split(x)
        if self.ngrams is not None:
            x = _strings.ngrams(x, self.ngrams, separator=" ")
        return x

    def adapt(self, data, batch_size=None, steps=None):
        """Learns the vocabulary (and IDF weights in tf_idf mode) from `data`: strings as an
        array, list, tensor or Dataset of batches."""
        rows = []
        for batch in _text_batches(data):
            tokens = self._preprocess(batch.reshape(-1) if batch.ndim else batch.reshape(1))
            if isinstance(tokens, RaggedTensor):
                rows += [list(r) for r in tokens.to_list()]
            else:
                rows += [[t] for t in _flat_tokens(tokens)]
        self._learn(rows, len(rows))

    def call(self, inputs):
        out = self._encode(self._preprocess(inputs))
        if self.output_mode != "int":
            return out
        if isinstance(out, RaggedTensor):
            if self.ragged:
                return out
            shape = None if self.output_sequence_length is None else \
                [None, self.output_sequence_length]
            return out.to_tensor(default_value=0, shape=shape)
        return out

    def get_config(self):
        config = super().get_config()
        config.update(max_tokens=self.max_tokens, standardize=self.standardize
                      if not callable(self.standardize) else None,
                      split=self.split if not callable(self.split) else None, ngrams=self.ngrams,
                      output_mode=self.output_mode,
                      output_sequence_length=self.output_sequence_length,
                      pad_to_max_tokens=self.pad_to_max_tokens, ragged=self.ragged,
                      vocabulary=self._input_vocabulary, idf_weights=self._input_idf)
        return config
