"""soxr resampling: lengths, frequency preservation, and the seamless streaming resampler."""

from __future__ import annotations

import numpy as np
import pytest

from speech.audio.resample import StreamResampler, resample

PAIRS = [(24000, 48000), (22050, 24000), (24000, 16000), (24000, 22050), (16000, 8000), (44100, 24000)]


def _tone(rate: int, seconds: float, freq: float) -> np.ndarray:
    return (0.5 * np.sin(2 * np.pi * freq * np.arange(int(rate * seconds)) / rate)).astype(np.float32)


def _dominant_frequency(x: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    return float(np.argmax(spectrum) * rate / len(x))


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_length_and_frequency(src: int, dst: int) -> None:
    x = _tone(src, 1.5, 1000.0)
    y = resample(x, src, dst)
    assert y.dtype == np.float32
    assert len(y) == round(len(x) * dst / src)
    assert _dominant_frequency(y, dst) == pytest.approx(1000.0, abs=dst / len(y) * 1.5)
    mid = slice(len(y) // 4, 3 * len(y) // 4)
    assert np.sqrt(np.mean(y[mid] ** 2)) == pytest.approx(0.5 / np.sqrt(2), rel=0.01)


def test_identity_when_rates_match() -> None:
    x = _tone(24000, 0.2, 440.0)
    assert np.array_equal(resample(x, 24000, 24000), x)
    s = StreamResampler(24000, 24000)
    assert np.array_equal(s.process(x), x)
    assert len(s.flush()) == 0


def test_content_above_the_new_nyquist_is_removed() -> None:
    y = resample(_tone(48000, 1.0, 10000.0), 48000, 16000)  # 10 kHz cannot exist at 16 kHz
    assert np.sqrt(np.mean(y**2)) < 0.01


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_stream_resampler_matches_one_shot(src: int, dst: int) -> None:
    rng = np.random.default_rng(3)
    x = (0.3 * rng.standard_normal(int(src * 2.3))).astype(np.float32)
    one_shot = resample(x, src, dst)
    stream = StreamResampler(src, dst)
    sizes = rng.integers(50, 9000, size=64)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    pieces = [stream.process(x[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if a < len(x)]
    streamed = np.concatenate([*pieces, stream.flush()])
    assert len(streamed) == len(one_shot)
    assert np.max(np.abs(streamed - one_shot)) < 1e-4


def test_stream_has_no_seams_where_chunked_one_shot_does() -> None:
    """Chunk-by-chunk one-shot resampling leaves seams; the stream resampler does not."""
    x = _tone(22050, 2.0, 300.0)
    chunks = np.array_split(x, 8)
    reference = resample(x, 22050, 24000)
    naive = np.concatenate([resample(c, 22050, 24000) for c in chunks])
    s = StreamResampler(22050, 24000)
    smooth = np.concatenate([*(s.process(c) for c in chunks), s.flush()])
    n = min(len(naive), len(reference))
    assert np.max(np.abs(smooth - reference)) < 1e-4
    assert np.max(np.abs(naive[:n] - reference[:n])) > 1e-2


def test_flush_is_final() -> None:
    s = StreamResampler(24000, 16000)
    s.process(np.zeros(100, np.float32))
    s.flush()
    assert len(s.flush()) == 0
    with pytest.raises(RuntimeError):
        s.process(np.zeros(10, np.float32))
