"""Stretches encoded on their own, joined in fragmented MP4, decode like one encoding."""

from __future__ import annotations

import io
import struct

import av
import numpy as np
import pytest

from speech.audio.aac_frames import FRAME, POST_ROLL, PRE_ROLL, encode_stretch
from speech.audio.fmp4 import init_segment, media_segment
from speech.errors import EncodeError

RATE = 24000


def _voice_like(seconds: float, seed: int = 0) -> np.ndarray:
    """A gliding harmonic tone with a syllable-rate envelope and a little noise."""
    t = np.arange(int(RATE * seconds)) / RATE
    phase = 2 * np.pi * np.cumsum(140 + 30 * np.sin(2 * np.pi * 0.7 * t)) / RATE
    x = sum(0.3 / k * np.sin(k * phase) for k in range(1, 25)) * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t)) ** 2
    x = x + 0.01 * np.random.default_rng(seed).standard_normal(len(t))
    return (x / np.abs(x).max() * 0.8).astype(np.float32)


def _pieces(x: np.ndarray, cuts: list[int]) -> list[bytes]:
    """The timeline cut at ``cuts`` into media segments, each from its own encoder run."""
    bounds = [0, *cuts, len(x)]
    out = []
    config = b""
    for n, (start, stop) in enumerate(zip(bounds, bounds[1:], strict=False)):
        lo, hi = max(0, start - PRE_ROLL), min(len(x), stop + POST_ROLL)
        stretch = encode_stretch(x[lo:hi], lo, start, stop, RATE)
        config = stretch.config
        out.append(media_segment(n + 1, start, stretch.samples))
    return [init_segment(RATE, config), *out]


def _decode(data: bytes) -> tuple[np.ndarray, list[int]]:
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.audio[0]
        packets = list(container.demux(stream))
        durations = [int(p.duration or 0) for p in packets if p.size]
    with av.open(io.BytesIO(data)) as container:
        frames = [f.to_ndarray().reshape(-1) for f in container.decode(audio=0)]
    return np.concatenate(frames), durations


def _snr(y: np.ndarray, x: np.ndarray, around: slice) -> float:
    error = y[around] - x[around]
    return float(10 * np.log10(np.sum(x[around] ** 2) / np.sum(error**2)))


def test_segments_from_separate_runs_join_like_one_encoding() -> None:
    x = _voice_like(13.0)
    cut = 140 * FRAME
    parts = _pieces(x, [cut, 2 * cut])
    joined, durations = _decode(b"".join(parts))
    assert sum(durations) == len(x)  # no priming frame, the last frame as long as the audio left
    assert len(joined) >= len(x)
    whole = _pieces(x, [])
    one, _ = _decode(b"".join(whole))
    for at in (cut, 2 * cut):
        around = slice(at - FRAME, at + FRAME)
        # the frames at a cut decode about as well as the same frames of one continuous run
        assert _snr(joined, x, around) > _snr(one, x, around) - 3.0
        assert _snr(joined, x, around) > 10.0


def test_a_stretch_without_its_rolls_clicks_at_the_cut() -> None:
    """What the rolls are for: the same cut without them is far worse (so the test above can fail)."""
    x = _voice_like(13.0)
    cut = 140 * FRAME
    bare = [encode_stretch(x[:cut], 0, 0, cut, RATE), encode_stretch(x[cut:], cut, cut, len(x), RATE)]
    data = init_segment(RATE, bare[0].config) + b"".join(
        media_segment(n + 1, start, s.samples) for n, (start, s) in enumerate(zip((0, cut), bare, strict=True))
    )
    joined, _ = _decode(data)
    rolled, _ = _decode(b"".join(_pieces(x, [cut])))
    around = slice(cut - FRAME, cut + FRAME)
    assert _snr(rolled, x, around) > _snr(joined, x, around) + 6.0


def test_a_media_segment_starts_where_its_decode_time_says() -> None:
    x = _voice_like(3.0)
    start = 20 * FRAME
    stretch = encode_stretch(x[start - PRE_ROLL :], start - PRE_ROLL, start, len(x), RATE)
    data = init_segment(RATE, stretch.config) + media_segment(7, start, stretch.samples)
    with av.open(io.BytesIO(data)) as container:
        first = next(p for p in container.demux(audio=0) if p.size)
        assert first.pts == start
        assert container.streams.audio[0].sample_rate == RATE
    tfdt = data.index(b"tfdt")
    assert struct.unpack(">Q", data[tfdt + 8 : tfdt + 16])[0] == start
    mfhd = data.index(b"mfhd")
    assert struct.unpack(">I", data[mfhd + 8 : mfhd + 12])[0] == 7


def test_the_same_stretch_gives_the_same_bytes() -> None:
    """A repeated task writes what a listener may already hold."""
    x = _voice_like(4.0)
    one = encode_stretch(x, 0, 0, 50 * FRAME, RATE)
    two = encode_stretch(x, 0, 0, 50 * FRAME, RATE)
    assert media_segment(1, 0, one.samples) == media_segment(1, 0, two.samples)


def test_refusals() -> None:
    x = _voice_like(1.0)
    with pytest.raises(EncodeError, match="22000 Hz"):
        encode_stretch(x, 0, 0, 1000, 22000)
    with pytest.raises(ValueError, match="frame grid"):
        encode_stretch(x, 0, 100, 1000, RATE)
    with pytest.raises(ValueError):
        media_segment(1, 0, [])
