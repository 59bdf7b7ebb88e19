"""WAV files as string tensors: the host ops `DecodeWav` and `EncodeWav` behind `tl.audio`.

Owns the conversion between 16-bit PCM WAV bytes (read and written with Python's `wave`
module) and float32 audio [samples, channels] in [-1, 1), as TensorFlow's: a sample s reads
as s / 32768; writing scales by 32768, rounds half away from zero and saturates to int16.
Decoding with `desired_channels` drops extra channels or repeats the file's last one;
`desired_samples` truncates or pads with silence.
"""
import io as _io
import struct
import wave

import numpy as np  # host kernels: PCM bytes to and from numpy arrays

from .. import dtypes as _dt
from ..errors import InvalidArgumentError, op_error
from ..op import apply, convert_to_tensor, defop, spec

__all__ = ["decode_wav", "encode_wav"]


def _decode_wav_infer(contents, desired_channels, desired_samples):
    return (spec([desired_samples if desired_samples >= 0 else None,
                  desired_channels if desired_channels >= 0 else None], _dt.float32),
            spec([], _dt.int32))


@defop("DecodeWav", infer=_decode_wav_infer, differentiable=False, num_outputs=2, host=True)
def _decode_wav(xp, contents, desired_channels, desired_samples):
    data = bytes(contents[()])
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise op_error(InvalidArgumentError, "decode_wav",
                       f"expected a RIFF WAVE file, got {len(data)} bytes starting {data[:12]!r}")
    _check_chunks(data)
    try:
        with wave.open(_io.BytesIO(data), "rb") as reader:
            channels, width = reader.getnchannels(), reader.getsampwidth()
            rate, frames = reader.getframerate(), reader.readframes(reader.getnframes())
    except (wave.Error, EOFError) as e:
        raise op_error(InvalidArgumentError, "decode_wav",
                       f"could not read the WAV file: {e}") from None
    if width != 2:
        raise op_error(InvalidArgumentError, "decode_wav",
                       f"can only read 16-bit PCM WAV files, got {8 * width}-bit samples")
    samples = np.frombuffer(frames, "<i2")
    samples = samples[:len(samples) // channels * channels].reshape(-1, channels)
    audio = samples.astype(np.float32) / np.float32(32768)
    if desired_channels >= 0 and desired_channels != channels:
        pick = np.minimum(np.arange(desired_channels), channels - 1)
        audio = audio[:, pick]
    if desired_samples >= 0:
        out = np.zeros((desired_samples, audio.shape[1]), np.float32)
        keep = min(desired_samples, len(audio))
        out[:keep] = audio[:keep]
        audio = out
    return np.ascontiguousarray(audio), np.array(rate, np.int32)


def _check_chunks(data):
    """Refuses (as TensorFlow's reader) a file whose `fmt ` chunk contradicts itself or whose
    chunks claim more bytes than the file holds: `wave` would read what is there as samples."""
    def bad(message):
        return op_error(InvalidArgumentError, "decode_wav", message)
    at, fmt, found_data = 12, None, False
    while at + 8 <= len(data):
        kind, size = data[at:at + 4], struct.unpack("<I", data[at + 4:at + 8])[0]
        if at + 8 + size > len(data):
            raise bad(f"the {kind.decode('latin-1')!r} chunk at byte {at} claims {size} bytes, "
                      f"the file has {len(data) - at - 8} after its header")
        if kind == b"fmt ":
            if size < 16:
                raise bad(f"the 'fmt ' chunk has {size} bytes, expected at least 16")
            fmt = struct.unpack("<HHIIHH", data[at + 8:at + 24])
        elif kind == b"data":
            found_data = True
        at += 8 + size + (size & 1)   # chunks are padded to even sizes
    if fmt is None or not found_data:
        raise bad("the file has no " + ("'fmt '" if fmt is None else "'data'") + " chunk")
    _, channels, rate, byte_rate, block_align, bits = fmt
    if channels == 0:
        raise bad("the 'fmt ' chunk declares 0 channels")
    if block_align != channels * bits // 8:
        raise bad(f"the 'fmt ' chunk's block align is {block_align}, expected channels "
                  f"({channels}) x bits per sample ({bits}) / 8 = {channels * bits // 8}")
    if byte_rate != rate * block_align:
        raise bad(f"the 'fmt ' chunk's byte rate is {byte_rate}, expected sample rate ({rate})"
                  f" x block align ({block_align}) = {rate * block_align}")


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """A 16-bit PCM WAV file as (audio, sample_rate): float32 audio [samples, channels] in
    [-1, 1) and the int32 sample rate. `desired_channels`/`desired_samples` (-1: the file's)
    drop or repeat channels (the last one) and truncate or zero-pad samples.

    Example:
        >>> wav = tl.audio.encode_wav([[0.5], [-0.25]], 8000)
        >>> audio, rate = tl.audio.decode_wav(wav); audio.numpy().ravel().tolist(), int(rate)
        ([0.5, -0.25], 8000)
    """
    contents = convert_to_tensor(contents, dtype=_dt.string)
    if contents.shape.rank not in (0, None):
        raise ValueError(f"decode_wav: expected a scalar string (one file's contents), got "
                         f"shape {contents.shape}")
    for what, value in (("desired_channels", desired_channels),
                        ("desired_samples", desired_samples)):
        if not isinstance(value, (int, np.integer)) or value < -1:
            raise ValueError(f"decode_wav: {what} must be an int >= -1, got {value!r}")
    if desired_channels == 0:
        raise ValueError("decode_wav: desired_channels must be positive (or -1), got 0")
    return apply("DecodeWav", contents, desired_channels=int(desired_channels),
                 desired_samples=int(desired_samples))


def _encode_wav_infer(audio, sample_rate):
    return spec([], _dt.string)


@defop("EncodeWav", infer=_encode_wav_infer, differentiable=False, host=True)
def _encode_wav(xp, audio, sample_rate):
    scaled = np.clip(audio.astype(np.float64), -1.0, 1.0) * 32768.0
    pcm = np.clip(np.sign(scaled) * np.floor(np.abs(scaled) + 0.5), -32768, 32767)
    buffer = _io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(audio.shape[1])
        writer.setsampwidth(2)
        writer.setframerate(int(sample_rate))
        writer.writeframes(pcm.astype("<i2").tobytes())
    out = np.empty((), dtype=object)
    out[()] = buffer.getvalue()
    return out


def encode_wav(audio, sample_rate, name=None):
    """16-bit PCM WAV bytes of float32 audio [samples, channels] (values outside [-1, 1]
    saturate) at the int32 scalar `sample_rate`."""
    audio = convert_to_tensor(audio, dtype=_dt.float32)
    if audio.shape.rank != 2:
        raise ValueError(f"encode_wav: audio must be 2-dimensional [samples, channels], got "
                         f"shape {audio.shape}")
    sample_rate = convert_to_tensor(sample_rate, dtype=_dt.int32)
    if sample_rate.shape.rank not in (0, None):
        raise ValueError(f"encode_wav: sample_rate must be a scalar, got shape "
                         f"{sample_rate.shape}")
    return apply("EncodeWav", audio, sample_rate)
