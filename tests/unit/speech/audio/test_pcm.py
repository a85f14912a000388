"""The numpy codecs: G.711 mu-law against audioop, WAV headers, L16 conversion."""

from __future__ import annotations

import io
import struct
import warnings
import wave

import numpy as np

from speech.audio.pcm import (
    STREAMING_SIZE,
    WavStreamEncoder,
    encode_wav,
    float_to_int16,
    lin2ulaw,
    patch_wav_sizes,
    ulaw2lin,
    wav_header,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import audioop  # removed in 3.13; lector pins 3.11


ALL_INT16 = np.arange(-32768, 32768, dtype=np.int16)


def test_lin2ulaw_matches_audioop_for_every_16_bit_value() -> None:
    expected = np.frombuffer(audioop.lin2ulaw(ALL_INT16.tobytes(), 2), dtype=np.uint8)
    got = lin2ulaw(ALL_INT16)
    mismatches = np.flatnonzero(got != expected)
    assert mismatches.size == 0, f"first mismatch at {ALL_INT16[mismatches[:5]]}"


def test_ulaw2lin_matches_audioop_for_every_code() -> None:
    codes = np.arange(256, dtype=np.uint8)
    expected = np.frombuffer(audioop.ulaw2lin(codes.tobytes(), 2), dtype="<i2")
    assert np.array_equal(ulaw2lin(codes), expected)


def test_ulaw_round_trip_error_is_within_a_step() -> None:
    x = ALL_INT16[::7]
    back = ulaw2lin(lin2ulaw(x)).astype(np.int32)
    # G.711 step is at most 1024 (top segment) plus clipping above 32124
    assert np.max(np.abs(back - x.astype(np.int32))) <= 1024 + 644


def test_float_to_int16_rounds_and_clips() -> None:
    x = np.array([0.0, 1.0, -1.0, 2.0, -2.0, 0.5, 1.4 / 32767, -1.6 / 32767], dtype=np.float32)
    assert float_to_int16(x).tolist() == [0, 32767, -32767, 32767, -32767, 16384, 1, -2]
    assert float_to_int16(x).dtype == np.dtype("<i2")


def _parse_header(header: bytes) -> dict[str, int | bytes]:
    fields = struct.unpack("<4sI4s4sIHHIIHH4sI", header[:44])
    names = [
        "riff", "riff_size", "wave", "fmt", "fmt_size", "audio_format", "channels",
        "rate", "byte_rate", "block_align", "bits", "data", "data_size",
    ]  # fmt: skip
    return dict(zip(names, fields, strict=True))


def test_streaming_wav_header_fields() -> None:
    h = _parse_header(wav_header(22050))
    assert h["riff"] == b"RIFF" and h["wave"] == b"WAVE" and h["fmt"] == b"fmt " and h["data"] == b"data"
    assert h["fmt_size"] == 16 and h["audio_format"] == 1 and h["channels"] == 1
    assert h["rate"] == 22050 and h["byte_rate"] == 44100 and h["block_align"] == 2 and h["bits"] == 16
    assert h["riff_size"] == STREAMING_SIZE and h["data_size"] == STREAMING_SIZE


def test_whole_wav_has_exact_sizes_and_reads_back() -> None:
    x = np.sin(np.linspace(0, 100, 12345)).astype(np.float32) * 0.5
    data = encode_wav(x, 16000)
    h = _parse_header(data)
    assert h["data_size"] == 2 * 12345 and h["riff_size"] == len(data) - 8
    with wave.open(io.BytesIO(data)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes()) == (16000, 1, 2, 12345)
        pcm = np.frombuffer(w.readframes(12345), dtype="<i2")
    assert np.array_equal(pcm, float_to_int16(x))


def test_streamed_wav_header_first_then_patched_on_disk() -> None:
    enc = WavStreamEncoder(24000)
    first = enc.encode(np.zeros(100, np.float32))
    assert first[:4] == b"RIFF" and len(first) == 44 + 200
    second = enc.encode(np.full(50, 0.25, np.float32))
    assert len(second) == 100  # no second header
    f = io.BytesIO(first + second + enc.finish())
    patch_wav_sizes(f)
    with wave.open(io.BytesIO(f.getvalue())) as w:
        assert w.getnframes() == 150


def test_empty_wav_stream_still_has_a_header() -> None:
    assert len(WavStreamEncoder(8000).finish()) == 44
