"""tl.data with strings: string slices and batches, TextLineDataset; tl.io.read_file/write_file."""
import numpy as np
import pytest

import trainlib as tl


def test_string_slices_batch_and_map():
    ds = tl.data.Dataset.from_tensor_slices((np.array(["a b", "c"]), [1, 0])).batch(2)
    (x, y), = list(ds)
    assert x.dtype is tl.string and x.numpy().tolist() == [b"a b", b"c"]
    lengths = tl.data.Dataset.from_tensor_slices(["a b", "héllo"]).map(
        lambda s: tl.strings.length(s, unit="UTF8_CHAR"))
    assert [int(v) for v in lengths] == [3, 5]


def test_text_lines_and_files(tmp_path):
    path = str(tmp_path / "a.txt")
    tl.io.write_file(path, "one\ntwo words\r\nthree")
    assert tl.io.read_file(path).numpy() == b"one\ntwo words\r\nthree"
    lines = tl.data.TextLineDataset([path, path])
    assert [v.numpy() for v in lines] == [b"one", b"two words", b"three"] * 2
    batches = list(tl.data.TextLineDataset(path).batch(2))
    assert batches[0].numpy().tolist() == [b"one", b"two words"]

    @tl.function
    def shout(p):
        return tl.strings.upper(tl.io.read_file(p))
    assert shout(tl.constant(path)).numpy() == b"ONE\nTWO WORDS\r\nTHREE"
    with pytest.raises(tl.errors.NotFoundError, match="ReadFile"):
        tl.io.read_file(path + ".missing")


def test_text_dataset_from_directory(tmp_path):
    for label, texts in {"b_pos": ["great", "fun"], "a_neg": ["bad"]}.items():
        (tmp_path / label).mkdir()
        for i, t in enumerate(texts):
            (tmp_path / label / f"{i}.txt").write_text(t)
    ds = tl.utils.text_dataset_from_directory(str(tmp_path), batch_size=8, shuffle=False,
                                              verbose=False)
    assert ds.class_names == ["a_neg", "b_pos"]
    (x, y), = list(ds)
    assert x.numpy().tolist() == [b"bad", b"great", b"fun"] and y.numpy().tolist() == [0, 1, 1]
    shuffled = tl.utils.text_dataset_from_directory(str(tmp_path), seed=3, verbose=False,
                                                    label_mode="categorical")
    (x, y), = list(shuffled)
    assert sorted(x.numpy().tolist()) == [b"bad", b"fun", b"great"] and y.shape == (3, 2)
