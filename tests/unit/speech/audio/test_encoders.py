"""Streaming encoders: bytes after every chunk, and the whole stream decodes to the right audio."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from speech.audio.encoders import StreamEncoder, encode_whole, open_encoder
from speech.audio.formats import STREAMING_FORMATS, AudioFormat
from speech.audio.pcm import float_to_int16, lin2ulaw
from speech.audio.resample import resample
from speech.errors import EncodeError, UnsupportedFormat

F = AudioFormat
OPUS = (F.WEBM_OPUS, F.OGG_OPUS)
CHUNK_S = 0.8
N_CHUNKS = 3


def _chunks(sweep: Callable[..., np.ndarray], rate: int) -> list[np.ndarray]:
    return [sweep(rate, CHUNK_S, f0=200.0 * (i + 1), f1=3000.0) for i in range(N_CHUNKS)]


def _expected_rate(fmt: AudioFormat, enc: StreamEncoder) -> int:
    return 48000 if fmt in OPUS else enc.encode_rate  # Ogg/WebM Opus always decode at 48 kHz


def _aligned_similarity(
    decoded: np.ndarray, dec_rate: int, original: np.ndarray, rate: int, skip: int
) -> float:
    """Correlation between the input and the decoded audio brought back to the input rate."""
    back = resample(decoded, dec_rate, rate)[skip:]
    n = min(len(back), len(original))
    a, b = original[:n], back[:n]
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-12))


@pytest.mark.parametrize("fmt", STREAMING_FORMATS, ids=lambda f: f.value)
@pytest.mark.parametrize("rate", [24000, 22050])
def test_stream_emits_bytes_per_chunk_and_decodes(fmt: AudioFormat, rate: int, sweep, decode) -> None:
    enc = open_encoder(fmt, rate)
    assert isinstance(enc, StreamEncoder)
    chunks = _chunks(sweep, rate)

    first = enc.encode(chunks[0])
    assert len(first) > 0, "nothing after the first chunk: the encoder buffers instead of streaming"
    if fmt in (*OPUS, F.MP3):
        # the first chunk's bytes alone already carry most of its audio (not just a header)
        _, partial = decode(first, fmt, enc.encode_rate)
        assert len(partial) / _expected_rate(fmt, enc) > CHUNK_S - 0.3
    outputs = [first] + [enc.encode(c) for c in chunks[1:]]
    assert all(len(o) > 0 for o in outputs)
    data = b"".join(outputs) + enc.finish()

    dec_rate, decoded = decode(data, fmt, enc.encode_rate)
    assert dec_rate == _expected_rate(fmt, enc)
    expected_s = N_CHUNKS * CHUNK_S
    priming_s = enc.priming_samples / enc.encode_rate
    assert abs(len(decoded) / dec_rate - priming_s - expected_s) <= 0.05

    skip = int(round(enc.priming_samples * rate / enc.encode_rate))
    similarity = _aligned_similarity(decoded, dec_rate, np.concatenate(chunks), rate, skip)
    assert similarity > 0.9, f"decoded audio does not match the input (r={similarity:.3f})"


def test_opus_at_odd_rates_uses_the_nearest_libopus_rate() -> None:
    assert open_encoder(F.OGG_OPUS, 22050).encode_rate == 24000
    assert open_encoder(F.WEBM_OPUS, 44100).encode_rate == 48000
    assert open_encoder(F.OGG_OPUS, 16000).encode_rate == 16000


def test_headerless_streams_are_exact(sweep) -> None:
    x = sweep(8000, 0.25)
    assert open_encoder(F.PCM, 8000).encode(x) == float_to_int16(x).tobytes()
    assert open_encoder(F.MULAW, 8000).encode(x) == lin2ulaw(float_to_int16(x)).tobytes()


def test_bitrate_is_applied(sweep) -> None:
    x = sweep(24000, 2.0)
    sizes = []
    for bitrate in (16000, 64000):
        enc = open_encoder(F.OGG_OPUS, 24000, bitrate=bitrate)
        sizes.append(len(enc.encode(x) + enc.finish()))
    assert sizes[1] > 2.5 * sizes[0]


def test_encoder_lifecycle_errors(sweep) -> None:
    enc = open_encoder(F.MP3, 24000)
    enc.encode(sweep(24000, 0.1))
    enc.finish()
    with pytest.raises(EncodeError):
        enc.encode(sweep(24000, 0.1))
    abandoned = open_encoder(F.WEBM_OPUS, 24000)
    abandoned.encode(sweep(24000, 0.1))
    abandoned.close()
    abandoned.close()  # idempotent


def test_codec_refusal_surfaces_at_open_as_encode_error() -> None:
    with pytest.raises(EncodeError):
        open_encoder(F.OGG_OPUS, 24000, bitrate=10**9)  # libopus refuses; PyAV error is translated


@pytest.mark.parametrize("fmt", [F.FLAC, F.M4A, F.M4B])
def test_batch_only_formats_cannot_stream(fmt: AudioFormat) -> None:
    with pytest.raises(UnsupportedFormat):
        open_encoder(fmt, 24000)


def test_encode_whole_headerless_matches_stream(sweep) -> None:
    x = sweep(16000, 0.5)
    enc = open_encoder(F.WAV, 16000)
    streamed = enc.encode(x) + enc.finish()
    whole = encode_whole(F.WAV, x, 16000)
    assert whole[44:] == streamed[44:] and whole[:4] == b"RIFF"
    assert encode_whole(F.PCM, x, 16000) == float_to_int16(x).tobytes()
