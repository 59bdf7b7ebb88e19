"""tl.strings against Python's own string functions (no TensorFlow needed), eager and traced."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trainlib as tl
from trainlib.graph.ops.farmhash import fingerprint64

texts = st.lists(st.text(alphabet="abcAB é\t,1ü", max_size=8), min_size=1, max_size=5)


def b(items):
    return [s.encode("utf-8") for s in items]


def both(fn, *args):
    """fn eagerly and traced: the two must agree; returns the eager result."""
    eager = fn(*args)
    traced = tl.function(fn, autograph=False)(*args)
    np.testing.assert_array_equal(np.asarray(traced), np.asarray(eager))
    return eager


@settings(max_examples=25, deadline=None)
@given(texts)
def test_case_strip_length(words):
    x = tl.constant(words)
    assert both(tl.strings.lower, x).numpy().tolist() == [w.lower() for w in b(words)]
    assert both(tl.strings.upper, x).numpy().tolist() == [w.upper() for w in b(words)]
    assert tl.strings.lower(x, encoding="utf-8").numpy().tolist() == b([w.lower() for w in words])
    assert both(tl.strings.strip, x).numpy().tolist() == [w.strip() for w in b(words)]
    assert both(tl.strings.length, x).numpy().tolist() == [len(w) for w in b(words)]
    assert tl.strings.length(x, unit="UTF8_CHAR").numpy().tolist() == [len(w) for w in words]


@settings(max_examples=25, deadline=None)
@given(texts)
def test_split_join(words):
    x = tl.constant(words)
    assert tl.strings.split(x).to_list() == [w.split() for w in b(words)]
    assert tl.strings.split(x, sep=",").to_list() == [w.split(b",") for w in b(words)]
    assert tl.strings.unicode_split(x).to_list() == [b(list(w)) for w in words]
    assert tl.strings.unicode_decode(x, "UTF-8").to_list() == [[ord(c) for c in w] for w in words]
    assert tl.strings.bytes_split(x).to_list() == [[bytes([c]) for c in w] for w in b(words)]
    assert tl.strings.reduce_join(x, separator="|").numpy() == b"|".join(b(words))
    assert tl.strings.join([x, "!"], separator="-").numpy().tolist() == [w + b"-!" for w in b(words)]


@settings(max_examples=25, deadline=None)
@given(texts)
def test_regex(words):
    x = tl.constant(words)
    got = tl.strings.regex_replace(x, r"([ab])", r"<\1>").numpy().tolist()
    assert got == [re.sub(rb"([ab])", rb"<\g<1>>", w) for w in b(words)]
    got = tl.strings.regex_full_match(x, "[a-z]*").numpy().tolist()
    assert got == [re.fullmatch("[a-z]*", w) is not None for w in words]


def test_substr_numbers_and_formatting():
    assert tl.strings.substr("hello", 1, 3).numpy() == b"ell"
    assert tl.strings.substr("héllo", 1, 2, unit="UTF8_CHAR").numpy() == "él".encode()
    with pytest.raises(tl.errors.InvalidArgumentError, match="Substr"):
        tl.strings.substr("hi", 5, 1)
    np.testing.assert_array_equal(tl.strings.to_number(["1.5", "-2"]).numpy(), [1.5, -2.0])
    assert tl.strings.to_number(["1.5"]).dtype is tl.float32
    with pytest.raises(tl.errors.InvalidArgumentError, match="StringToNumber"):
        tl.strings.to_number(["one"])
    assert tl.strings.as_string([1, 22]).numpy().tolist() == [b"1", b"22"]
    assert tl.strings.as_string([0.5]).numpy().tolist() == [b"0.500000"]
    assert tl.strings.format("a={} b={}", [tl.constant(1), tl.constant([1, 2])]).numpy() == \
        b"a=1 b=[1 2]"
    assert tl.strings.ngrams(["a", "b", "c"], 2).numpy().tolist() == [b"a b", b"b c"]
    assert tl.strings.unicode_encode([104, 233], "UTF-8").numpy() == "hé".encode()
    assert tl.strings.unicode_transcode("hé", "UTF-8", "UTF-16-BE").numpy() == "hé".encode("utf-16-be")


def test_hash_buckets_are_fingerprint64():
    # known FarmHash Fingerprint64 values (the ones TensorFlow's StringToHashBucketFast uses)
    assert fingerprint64(b"") == 0x9ae16a3b2f90404f
    words = [b"", b"a", b"hello", b"x" * 20, b"y" * 50, b"z" * 200]
    got = tl.strings.to_hash_bucket_fast(words, 97).numpy().tolist()
    assert got == [fingerprint64(w) % 97 for w in words]
    assert len({fingerprint64(w) for w in words}) == len(words)


def test_string_ops_reject_numbers_and_have_no_gradient():
    with pytest.raises(TypeError, match="StringLower"):
        tl.strings.lower(tl.constant([1.0]))
    x = tl.Variable(2.0)
    with tl.GradientTape() as tape:
        s = tl.strings.as_string(x * 3)
        y = tl.strings.to_number(s) * x
    assert float(tape.gradient(y, x)) == pytest.approx(6.0)  # only through the direct use of x


_CSV_TEXT = st.text(st.characters(codec="ascii", exclude_characters="\r\n"), max_size=6)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-10 ** 6, 10 ** 6), _CSV_TEXT), min_size=1, max_size=5))
def test_decode_csv_agrees_with_python_csv(rows):
    import csv
    import io
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC).writerows(
        [(n, s) for n, s in rows])
    lines = buffer.getvalue().split("\n")[:-1]
    parsed = list(csv.reader(lines))
    ints, texts = tl.io.decode_csv(lines, [[0], ["?"]])
    assert ints.numpy().tolist() == [int(float(r[0])) for r in parsed]
    assert [t.decode() for t in texts.numpy().tolist()] == [r[1] or "?" for r in parsed]


def test_decode_csv_errors_name_field_and_record():
    with pytest.raises(tl.errors.InvalidArgumentError, match="Field 1 is required but missing "
                                                             "in record 1"):
        tl.io.decode_csv(["1,2", "3,"], [[0], tl.constant([], tl.int32)])
    with pytest.raises(tl.errors.InvalidArgumentError, match="Expect 2 fields but have 3"):
        tl.io.decode_csv(["1,2,3"], [[0], [0]])
    with pytest.raises(tl.errors.InvalidArgumentError, match="not a valid int32: 1_0"):
        tl.io.decode_csv(["1_0"], [[0]])


def test_invalid_code_points_and_bytes_follow_errors_as_tensorflow():
    enc = tl.strings.unicode_encode
    assert enc([104, 0x110000, 105], "UTF-8", errors="replace").numpy() == b"h\xef\xbf\xbdi"
    assert enc([104, 0xD800, 105], "UTF-8", errors="ignore").numpy() == b"hi"
    assert enc([104, -1], "UTF-8", errors="replace", replacement_char=63).numpy() == b"h?"
    with pytest.raises(tl.errors.InvalidArgumentError, match="not a valid code point"):
        enc([104, -1], "UTF-8", errors="strict")
    assert tl.strings.unicode_split(b"a\xffb").numpy().tolist() == [b"a", b"\xef\xbf\xbd", b"b"]
    assert tl.strings.unicode_decode(b"a\xffb", "UTF-8", errors="ignore").numpy().tolist() == \
        [97, 98]
    with pytest.raises(tl.errors.InvalidArgumentError, match="invalid UTF-8 at byte 1"):
        tl.strings.unicode_decode(b"a\xffb", "UTF-8", errors="strict")
