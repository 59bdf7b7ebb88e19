"""TensorFlow vs trainlib for `tf.audio.decode_wav`/`encode_wav`: the same samples, rate, shapes
and bytes, eagerly and inside a function, with channel/sample reshaping, saturation, rounding
at half steps, and the same failures on bad files."""
import io
import wave

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from .compare import check, in_function  # noqa: E402

AUDIO = np.array([[-1.5, -1.0], [-0.5, 0.25], [0.99999, 1.0], [1.2, 1.6e-5],
                  [1 / 65536, 3 / 65536], [-1 / 65536, -3 / 65536]], np.float32)


def _wav(width, channels=1, frames=b"\x00\x80"):
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(channels)
        writer.setsampwidth(width)
        writer.setframerate(8000)
        writer.writeframes(frames)
    return buffer.getvalue()


STEREO = _wav(2, 2, np.arange(-5000, 5000, 700, dtype="<i2")[:14].tobytes())

PROGRAMS = {
    "encode": lambda lib: lib.audio.encode_wav(AUDIO, 16000),
    "roundtrip": lambda lib: lib.audio.decode_wav(lib.audio.encode_wav(AUDIO, 44100)),
    "decode": lambda lib: lib.audio.decode_wav(STEREO),
    "more_channels_and_samples": lambda lib: lib.audio.decode_wav(STEREO, 3, 9),
    "fewer_channels_and_samples": lambda lib: lib.audio.decode_wav(STEREO, 1, 2),
    "mono_to_stereo": lambda lib: lib.audio.decode_wav(
        lib.audio.encode_wav(AUDIO[:, :1], 8000), desired_channels=2),
    "eight_bit": lambda lib: lib.audio.decode_wav(_wav(1)),
    "not_riff": lambda lib: lib.audio.decode_wav(b"junk" * 12),
    "encode_rank_1": lambda lib: lib.audio.encode_wav(AUDIO[0], 100),
}


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name, graph):
    check(in_function(PROGRAMS[name], graph))


def test_static_shapes_in_a_function():
    import trainlib as tl
    for lib in (tf, tl):
        fn = lib.function(lambda c: lib.audio.decode_wav(c, desired_channels=2))
        audio, rate = fn.get_concrete_function(lib.TensorSpec([], lib.string)).structured_outputs
        assert audio.shape.as_list() == [None, 2] and rate.shape.as_list() == []
