"""The live playlist's level, segment by segment as the maker makes them (each level handed on
through its JSON): the stream comes out at the job's target as pyloudnorm hears it, in book
scope and, chapter by chapter, in chapter scope; the limiter's loss on a peaky voice is made up;
and the peaks stay under the ceiling."""

from __future__ import annotations

import numpy as np
import pyloudnorm
import pytest

from books.rendering import limit_peaks
from scheduler.hls_levels import CEILING, MIN_CHAPTER_S, LiveLevel, leveled
from speech.audio import true_peak_level

RATE = 24000
SEGMENT = 6 * RATE // 1024 * 1024
ROLL = 2048


def _speechlike(seconds: float, seed: int, level: float, crest: float = 0.0) -> np.ndarray:
    """Syllable-rate bursts with pauses; ``crest``: sharp spikes that the limiter must pull down."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(RATE * seconds)) / RATE
    envelope = np.clip(np.sin(2 * np.pi * 3.1 * t), 0, None) * (np.sin(2 * np.pi * 0.23 * t) > -0.4)
    x = envelope * (0.3 * np.sin(2 * np.pi * 140 * t) + 0.08 * rng.standard_normal(len(t)))
    if crest:
        for at in rng.integers(0, len(t) - 40, size=int(seconds * 6)):
            x[at : at + 24] += crest * np.hanning(24) * envelope[at]
    return (level * x).astype(np.float32)


def _stream(
    audio: np.ndarray, *, target: float, chapter_scope: bool = False, chapters: tuple[int, ...] = (),
    spans: list[tuple[int, np.ndarray]] | None = None,
) -> tuple[np.ndarray, list[int]]:
    """The segments' own samples, joined, and each one's gain in tenths of a dB; ``spans``
    receives what each encoding is given (rolls included) and where it starts."""
    level, out, gains = LiveLevel.start(RATE), [], []
    cuts = sorted({*range(0, len(audio), SEGMENT), *chapters})
    for start, stop in zip(cuts, [*cuts[1:], len(audio)], strict=True):
        lo, hi = max(0, start - ROLL), min(len(audio), stop + ROLL)
        y, level = leveled(level, audio[lo:hi], slice(start - lo, stop - lo), rate=RATE, target_lufs=target,
                           chapter_scope=chapter_scope, new_chapter=start in chapters)
        level = LiveLevel.from_json(level.to_json())
        if spans is not None:
            spans.append((lo, y))
        out.append(y[start - lo : stop - lo])
        gains.append(level.gain_tenths_db)
    return np.concatenate(out), gains


def _lufs(x: np.ndarray) -> float:
    return float(pyloudnorm.Meter(RATE).integrated_loudness(x.astype(np.float64)))


@pytest.mark.parametrize("target", [-16.0, -23.0])
def test_a_book_is_streamed_at_its_target_from_the_loudness_known_so_far(target: float) -> None:
    raw = _speechlike(120, seed=1, level=0.5)
    out, _ = _stream(raw, target=target)
    assert abs(_lufs(raw) - target) > 2  # the raw render is elsewhere
    # The first segment's gain comes from its own 6 s; the gains settle as the book grows.
    assert _lufs(out) == pytest.approx(target, abs=0.3)
    # The reading keeps its dynamics: each segment (after the first few, whose gain followed a
    # measurement of seconds) is as much louder or quieter than the book as it was raw.
    book_gain = target - _lufs(raw)
    for start in range(5 * SEGMENT, len(raw) - SEGMENT, SEGMENT):
        raw_part, out_part = raw[start : start + SEGMENT], out[start : start + SEGMENT]
        assert _lufs(out_part) - _lufs(raw_part) == pytest.approx(book_gain, abs=0.3), start // SEGMENT
    assert true_peak_level(out, RATE) <= 20 * np.log10(CEILING) + 0.05


def test_the_limiter_s_loss_on_a_peaky_voice_is_made_up() -> None:
    """A voice whose crest the limiter cuts into as joe's: under the book's one gain and the
    limiter it lands 0.8 LU short (assembly renders again for that); the stream makes most of it up."""
    raw = _speechlike(120, seed=2, level=0.6, crest=0.5)
    out, gains = _stream(raw, target=-16.0)
    plain = limit_peaks(raw * np.float32(10 ** ((-16.0 - _lufs(raw)) / 20)), RATE, CEILING)  # the book's gain
    assert _lufs(plain) < -16.6
    assert _lufs(out) == pytest.approx(-16.0, abs=0.3)
    assert gains[-1] / 10 > -16.0 - _lufs(raw) + 0.5  # more than the book's gain: the loss made up
    assert true_peak_level(out, RATE) <= 20 * np.log10(CEILING) + 0.05


def test_in_chapter_scope_each_chapter_reaches_the_target_once_measured() -> None:
    loud, quiet = _speechlike(90, seed=3, level=0.6), _speechlike(90, seed=4, level=0.15)  # 12 dB apart
    raw = np.concatenate([loud, quiet])
    chapter = len(loud) // 1024 * 1024
    out, _ = _stream(raw, target=-19.0, chapter_scope=True, chapters=(chapter,))
    settled = int((MIN_CHAPTER_S + 8) * RATE)  # the chapter's own meter, once it has its seconds
    assert _lufs(out[:chapter]) == pytest.approx(-19.0, abs=0.3)
    assert _lufs(out[chapter + settled :]) == pytest.approx(-19.0, abs=0.3)
    book, _ = _stream(raw, target=-19.0)  # book scope keeps the chapters' difference
    assert _lufs(book[:chapter]) - _lufs(book[chapter:]) > 8


def test_around_each_cut_both_encodings_are_given_the_same_samples() -> None:
    """A new gain starts after the samples the encoding before also had (its post-roll): else
    the frames either side of the cut would not cancel each other's aliasing."""
    raw = _speechlike(60, seed=5, level=0.5)
    spans: list[tuple[int, np.ndarray]] = []
    _, gains = _stream(raw, target=-23.0, spans=spans)  # no peak near the ceiling: no limiter
    assert len(set(gains[1:])) > 1
    for (lo0, y0), (lo1, y1) in zip(spans, spans[1:], strict=False):
        a, b = lo1, lo0 + len(y0)  # the samples both were given
        assert b - a == 2 * ROLL
        np.testing.assert_array_equal(y0[a - lo0 :], y1[: b - lo1])
