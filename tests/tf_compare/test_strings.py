"""tl.string tensors, tl.strings, ragged tensors: the same programs on TensorFlow and trainlib."""
import numpy as np
import pytest

from .compare import check, tf, tl  # noqa: F401 -- tf: skips this module without TensorFlow

WORDS = ["Hello World", "  padded\t", "héllo wörld", "", "a,b,,c", "x1y22z333"]


def ragged_list(r):
    return r.to_list() if hasattr(r, "to_list") else r


CASES = {
    "lower": lambda lib: lib.strings.lower(WORDS),
    "lower_utf8": lambda lib: lib.strings.lower(WORDS, encoding="utf-8"),
    "upper": lambda lib: lib.strings.upper(WORDS),
    "strip": lambda lib: lib.strings.strip(WORDS),
    "length_bytes": lambda lib: lib.strings.length(WORDS),
    "length_chars": lambda lib: lib.strings.length(WORDS, unit="UTF8_CHAR"),
    "substr": lambda lib: lib.strings.substr(["hello", "héllo"], 1, 3),
    "substr_chars": lambda lib: lib.strings.substr(["hello", "héllo"], 1, 3, unit="UTF8_CHAR"),
    "substr_negative": lambda lib: lib.strings.substr("hello", -3, 2),
    "substr_out_of_range": lambda lib: lib.strings.substr("hello", 9, 2),
    "regex_replace": lambda lib: lib.strings.regex_replace(WORDS, "[0-9]+", "#"),
    "regex_replace_group": lambda lib: lib.strings.regex_replace(WORDS, r"(\w)(\w)", r"\2\1"),
    "regex_replace_first": lambda lib: lib.strings.regex_replace(WORDS, "o", "0",
                                                                 replace_global=False),
    "regex_full_match": lambda lib: lib.strings.regex_full_match(WORDS, "[a-z0-9]+"),
    "to_number": lambda lib: lib.strings.to_number(["1.5", " 2", "-3e2"]),
    "to_number_int": lambda lib: lib.strings.to_number(["12", "-7"], out_type=lib.int32),
    "to_number_bad": lambda lib: lib.strings.to_number(["x"]),
    "as_string_int": lambda lib: lib.strings.as_string([1, -20]),
    "as_string_float": lambda lib: lib.strings.as_string([1.5, -0.25]),
    "as_string_precision": lambda lib: lib.strings.as_string([3.14159], precision=2),
    "as_string_bool": lambda lib: lib.strings.as_string([True, False]),
    "join": lambda lib: lib.strings.join([["a", "b"], "c"], separator="-"),
    "reduce_join_all": lambda lib: lib.strings.reduce_join([["a", "b"], ["c", "d"]]),
    "reduce_join_axis": lambda lib: lib.strings.reduce_join([["a", "b"], ["c", "d"]], axis=0,
                                                            separator=" "),
    "reduce_join_keepdims": lambda lib: lib.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1,
                                                                keepdims=True),
    "split": lambda lib: ragged_list(lib.strings.split(WORDS)),
    "split_sep": lambda lib: ragged_list(lib.strings.split(WORDS, sep=",")),
    "split_maxsplit": lambda lib: ragged_list(lib.strings.split(["a b c d"], maxsplit=1)),
    "split_scalar": lambda lib: lib.strings.split("a b"),
    "bytes_split": lambda lib: ragged_list(lib.strings.bytes_split(["ab", "é"])),
    "unicode_split": lambda lib: ragged_list(lib.strings.unicode_split(["hé", "wörld"], "UTF-8")),
    "unicode_decode": lambda lib: ragged_list(lib.strings.unicode_decode(["hé", "x"], "UTF-8")),
    "unicode_decode_scalar": lambda lib: lib.strings.unicode_decode("hé", "UTF-8"),
    "unicode_encode": lambda lib: lib.strings.unicode_encode([104, 233], "UTF-8"),
    "unicode_encode_ragged": lambda lib: lib.strings.unicode_encode(
        lib.ragged.constant([[104, 233], [120]]), "UTF-8"),
    "unicode_transcode": lambda lib: lib.strings.unicode_transcode(["hé"], "UTF-8", "UTF-16-BE"),
    "hash_fast": lambda lib: lib.strings.to_hash_bucket_fast(WORDS, 1000),
    "hash_strong": lambda lib: lib.strings.to_hash_bucket_strong(
        WORDS + ["12345678", "x" * 77], 2 ** 62, [7, -3]),
    "hash_strong_key_big": lambda lib: lib.strings.to_hash_bucket_strong(
        WORDS, 10, [2 ** 63 - 1, 12345678901234]),
    "hash_ragged": lambda lib: lib.strings.to_hash_bucket_fast(
        lib.strings.split(WORDS), 100).to_list(),
    "upper_ragged": lambda lib: lib.strings.upper(lib.strings.split(WORDS)).to_list(),
    "hash_fast_long": lambda lib: lib.strings.to_hash_bucket_fast(
        [("abc" * k) for k in range(40)], 2 ** 40),
    "ngrams": lambda lib: lib.strings.ngrams(["a", "b", "c", "d"], 2),
    "ngrams_ragged": lambda lib: ragged_list(lib.strings.ngrams(
        lib.ragged.constant([["a", "b", "c"], ["d"]]), 2, separator="_")),
    "ngrams_matrix": lambda lib: lib.strings.ngrams([["a", "b", "c"], ["d", "e", "f"]], 3),
    "format": lambda lib: lib.strings.format("x={} y={}", [lib.constant(3), lib.constant(2.5)]),
    "equal": lambda lib: lib.constant(["a", "b"]) == "a",
    "not_equal": lambda lib: lib.constant(["a", "b"]) != lib.constant(["a", "c"]),
    "add": lambda lib: lib.constant(["a", "b"]) + "x",
    "mul_error": lambda lib: lib.constant(["a"]) * lib.constant(["b"]),
    "exp_error": lambda lib: lib.exp(lib.constant(["a"])),
    "cast_error": lambda lib: lib.cast(lib.constant(["1"]), lib.float32),
    "generic": lambda lib: (lib.reshape(lib.constant(["a", "b"]), [2, 1]),
                            lib.concat([["a"], ["b"]], 0), lib.stack(["a", "b"]),
                            lib.gather(lib.constant(["a", "b"]), [1, 1]),
                            lib.expand_dims(lib.constant("a"), 0),
                            lib.squeeze(lib.constant([["a"]])),
                            lib.tile(lib.constant(["a", "b"]), [2]),
                            lib.where([True, False], ["a", "b"], ["c", "d"]),
                            lib.shape(lib.constant([["a"]])), lib.size(lib.constant(["a"])),
                            lib.identity(lib.constant("é"))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager(name):
    check(CASES[name])


GRAPH_CASES = ["lower", "strip", "length_chars", "substr", "regex_replace", "to_number",
               "as_string_float", "join", "reduce_join_axis", "hash_fast", "hash_strong", "ngrams", "equal",
               "generic", "unicode_transcode"]


@pytest.mark.parametrize("name", GRAPH_CASES)
def test_traced(name):
    check(lambda lib: lib.function(CASES[name], autograph=False)(lib))


def test_signature_and_control_flow():
    def program(lib):
        @lib.function(input_signature=[lib.TensorSpec([None], lib.string)])
        def f(x):
            y = lib.strings.upper(x)
            if lib.size(y) > 2:
                y = lib.strings.lower(y)
            else:
                y = y + "!"
            i = lib.constant(0)
            s = lib.strings.reduce_join(y)
            while i < 2:
                s = s + "."
                i += 1
            return y, s
        return f(lib.constant(["Ab", "c"])), f(lib.constant(["A", "b", "C"]))
    check(program)


RAGGED = {
    "row_lengths": lambda lib: lib.RaggedTensor.from_row_lengths([1, 2, 3, 4], [2, 0, 2]).to_list(),
    "row_splits": lambda lib: lib.RaggedTensor.from_row_splits([1, 2, 3], [0, 1, 1, 3]).to_list(),
    "value_rowids": lambda lib: lib.RaggedTensor.from_value_rowids([1, 2, 3], [0, 0, 2],
                                                                   nrows=4).to_list(),
    "constant": lambda lib: lib.ragged.constant([[1, 2], [], [3]]).to_list(),
    "constant_3d": lambda lib: lib.ragged.constant([[[1], [2, 3]], [[4]]]).to_list(),
    "to_tensor": lambda lib: lib.ragged.constant([[1, 2], [], [3]]).to_tensor(),
    "to_tensor_default": lambda lib: lib.ragged.constant([[1., 2.], [3.]]).to_tensor(
        default_value=-1.),
    "to_tensor_shape": lambda lib: lib.ragged.constant([[1, 2, 3], [4]]).to_tensor(shape=[3, 2]),
    "to_tensor_strings": lambda lib: lib.ragged.constant([["a", "b"], ["c"]]).to_tensor(),
    "to_tensor_3d": lambda lib: lib.ragged.constant([[[1], [2, 3]], [[4]]]).to_tensor(),
    "lengths": lambda lib: lib.ragged.constant([[1, 2], [], [3]]).row_lengths(),
    "splits": lambda lib: lib.ragged.constant([[1, 2], [], [3]]).row_splits,
    "values": lambda lib: lib.ragged.constant([[1, 2], [], [3]]).values,
    "row": lambda lib: lib.ragged.constant([[1, 2], [], [3]])[0],
    "rows": lambda lib: lib.ragged.constant([[1, 2], [], [3]])[1:].to_list(),
    "shape": lambda lib: lib.ragged.constant([[1, 2], [], [3]]).shape,
    "map_flat_values": lambda lib: lib.ragged.map_flat_values(
        lib.square, lib.ragged.constant([[1, 2], [3]])).to_list(),
    "math": lambda lib: (lib.ragged.constant([[1, 2], [3]]) * 2 + 1).to_list(),
    "bad_splits": lambda lib: lib.RaggedTensor.from_row_splits([1, 2], [0, 3]),
}


@pytest.mark.parametrize("name", sorted(RAGGED))
def test_ragged(name):
    check(RAGGED[name])
