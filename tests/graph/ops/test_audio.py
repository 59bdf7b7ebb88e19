"""tl.audio against Python's `wave` module (no TensorFlow needed): encode_wav writes 16-bit PCM
that `wave` reads back as round(x * 32768) saturated, decode_wav reads what `wave` wrote as
s / 32768, eagerly and traced, with desired_channels/desired_samples and clear errors."""
import io
import wave

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import trainlib as tl

pcm = hnp.arrays(np.int16, st.tuples(st.integers(0, 20), st.integers(1, 3)))


def _wav(samples, rate=16000, width=2):
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(samples.shape[1])
        writer.setsampwidth(width)
        writer.setframerate(rate)
        writer.writeframes(samples.astype("<i2").tobytes() if width == 2 else samples.tobytes())
    return buffer.getvalue()


@settings(max_examples=25, deadline=None)
@given(pcm, st.integers(-1, 4).filter(bool), st.integers(-1, 25))
def test_decode_wav_reads_what_wave_wrote(samples, channels, length):
    audio, rate = tl.function(lambda c: tl.audio.decode_wav(c, channels, length))(_wav(samples))
    expected = samples.astype(np.float64) / 32768
    if channels > 0:
        expected = expected[:, np.minimum(np.arange(channels), samples.shape[1] - 1)]
    if length >= 0:
        expected = np.concatenate([expected, np.zeros((max(length - len(expected), 0),
                                                       expected.shape[1]))])[:length]
    np.testing.assert_array_equal(audio.numpy(), expected.astype(np.float32))
    assert audio.dtype == tl.float32 and int(rate) == 16000


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float32, st.tuples(st.integers(1, 10), st.integers(1, 2)),
                  elements=st.floats(-2, 2, width=32)))
def test_encode_wav_writes_saturated_rounded_pcm(audio):
    data = tl.audio.encode_wav(audio, 22050).numpy()
    with wave.open(io.BytesIO(data), "rb") as reader:
        assert (reader.getnchannels(), reader.getsampwidth(), reader.getframerate()) == \
            (audio.shape[1], 2, 22050)
        written = np.frombuffer(reader.readframes(len(audio)), "<i2").reshape(audio.shape)
    scaled = np.clip(audio.astype(np.float64), -1, 1) * 32768
    expected = np.clip(np.sign(scaled) * np.floor(np.abs(scaled) + 0.5), -32768, 32767)
    np.testing.assert_array_equal(written, expected)


def test_bad_files_and_arguments():
    with pytest.raises(tl.errors.InvalidArgumentError, match="decode_wav.*RIFF WAVE"):
        tl.audio.decode_wav(b"not a wav file at all")
    with pytest.raises(tl.errors.InvalidArgumentError, match="decode_wav.*16-bit.*8-bit"):
        tl.audio.decode_wav(_wav(np.zeros((2, 1), np.uint8), width=1))
    with pytest.raises(ValueError, match="encode_wav: audio must be 2-dimensional"):
        tl.audio.encode_wav([0.5, 0.1], 8000)
    with pytest.raises(ValueError, match="decode_wav: desired_channels must be an int"):
        tl.audio.decode_wav(b"", desired_channels=1.5)


def test_wav_whose_chunks_contradict_the_file_is_refused():
    import struct
    good = tl.audio.encode_wav(np.zeros((10, 2), np.float32), 8000).numpy()
    at = good.index(b"data")
    claims_more = good[:at + 4] + struct.pack("<I", 10 ** 6) + good[at + 8:]
    with pytest.raises(tl.errors.InvalidArgumentError, match="claims 1000000 bytes"):
        tl.audio.decode_wav(claims_more)
    fmt = good.index(b"fmt ")
    bad_align = good[:fmt + 20] + struct.pack("<H", 3) + good[fmt + 22:]
    with pytest.raises(tl.errors.InvalidArgumentError, match="block align is 3"):
        tl.audio.decode_wav(bad_align)
    audio, rate = tl.audio.decode_wav(good)
    assert audio.shape == (10, 2) and int(rate) == 8000
