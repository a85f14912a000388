"""The decoded file's levels: what ``measure_file`` reads from an encoded file is what an
independent meter (pyloudnorm, scipy's polyphase 4x oversampling) reads from the same file
decoded by PyAV, for a lossless and a lossy format."""

from __future__ import annotations

import math
from pathlib import Path

import av
import numpy as np
import pyloudnorm
import pytest
from scipy.signal import resample_poly

from speech.audio import decoded_blocks, measure_file, open_file_encoder
from speech.errors import EncodeError

RATE = 44100


def _speechlike(seconds: float) -> np.ndarray:
    rng = np.random.default_rng(7)
    t = np.arange(int(RATE * seconds)) / RATE
    envelope = np.clip(np.sin(2 * np.pi * 3.0 * t), 0, None) * (np.sin(2 * np.pi * 0.25 * t) > -0.5)
    x = envelope * (0.3 * np.sin(2 * np.pi * 150 * t) + 0.05 * rng.standard_normal(len(t)))
    return x.astype(np.float32)


def _decoded(path: Path, rate: int = RATE) -> np.ndarray:
    with av.open(str(path)) as container:
        resampler = av.AudioResampler(format="flt", layout="mono", rate=rate)
        frames = [o.to_ndarray().reshape(-1) for f in container.decode(audio=0) for o in resampler.resample(f)]
    return np.concatenate(frames).astype(np.float64)


@pytest.mark.parametrize("fmt", ["wav", "mp3"])
def test_measure_file_reads_what_an_independent_meter_reads(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / f"x.{fmt}"
    encoder = open_file_encoder(fmt, RATE, path)
    x = _speechlike(23.0)
    for start in range(0, len(x), 4096):
        encoder.write(x[start : start + 4096])
    encoder.finish()
    levels = measure_file(path)
    y = _decoded(path)
    assert levels.sample_rate == RATE
    assert levels.loudness() == pytest.approx(pyloudnorm.Meter(RATE).integrated_loudness(y), abs=0.02)
    independent_peak = 20 * math.log10(float(np.max(np.abs(resample_poly(y, 4, 1)))))
    assert levels.true_peak_dbfs == pytest.approx(independent_peak, abs=0.1)
    # cut into parts, each part is measured as a file of its own: as pyloudnorm reads its samples,
    # to rounding (the part 7.33 s in, read on the whole file's 100 ms grid, is 0.003 LU off)
    cut = measure_file(path, cuts_s=[7.33, 15.0])
    assert len(cut.parts) == 3
    for part, (a, b) in enumerate([(0.0, 7.33), (7.33, 15.0)]):
        piece = y[int(round(a * RATE)) : int(round(b * RATE))]
        assert cut.loudness(part) == pytest.approx(pyloudnorm.Meter(RATE).integrated_loudness(piece), abs=1e-9)
    assert cut.true_peak == levels.true_peak and cut.samples == levels.samples
    assert max(cut.part_peaks) == cut.true_peak and levels.part_peaks == (levels.true_peak,)
    # a part per cut, a cut at the start too (an empty part before it): part 1 is then the first stretch
    at_start = measure_file(path, cuts_s=[0.0, 7.33])
    assert len(at_start.parts) == 3 and not len(at_start.parts[0]) and at_start.loudness(1) == cut.loudness(0)


def test_each_part_has_its_own_true_peak(tmp_path: Path) -> None:
    """A burst in the second part is that part's peak, not the others' (a chapter's limiter is
    lowered for its own overs only)."""
    x = 0.5 * _speechlike(25.0)
    burst = np.arange(400)
    x[int(12.0 * RATE) : int(12.0 * RATE) + 400] = 0.9 * np.sin(2 * np.pi * 1000 * burst / RATE)
    path = tmp_path / "x.wav"
    encoder = open_file_encoder("wav", RATE, path)
    encoder.write(x)
    encoder.finish()
    levels = measure_file(path, cuts_s=[10.0, 20.0])
    y = _decoded(path)
    for part, (a, b) in enumerate([(0, 10 * RATE), (10 * RATE, 20 * RATE), (20 * RATE, len(y))]):
        independent = 20 * math.log10(float(np.max(np.abs(resample_poly(y[a:b], 4, 1)))))
        assert levels.part_peaks_dbfs[part] == pytest.approx(independent, abs=0.1)
    assert levels.part_peaks_dbfs[1] > levels.part_peaks_dbfs[0] + 6 and levels.true_peak == levels.part_peaks[1]


@pytest.mark.parametrize("fmt", ["wav", "mp3", "m4b", "opus", "flac"])
def test_decoded_blocks_are_the_samples_a_resampler_gives(fmt: str, tmp_path: Path) -> None:
    """MP3 and AAC frames are read without the resampler (mono float already): the samples must
    be the ones the resampler would hand back, sample for sample."""
    path = tmp_path / f"x.{fmt}"
    encoder = open_file_encoder(fmt, RATE, path)
    encoder.write(_speechlike(3.0))
    encoder.finish()
    rates, blocks = zip(*decoded_blocks(path), strict=True)
    assert len(set(rates)) == 1  # the file's own rate (Opus: 48 kHz)
    np.testing.assert_array_equal(np.concatenate(blocks).astype(np.float64), _decoded(path, rates[0]))


def test_a_file_that_is_not_audio_is_an_encode_error(tmp_path: Path) -> None:
    path = tmp_path / "x.mp3"
    path.write_bytes(b"not audio at all" * 10)
    with pytest.raises(EncodeError):
        measure_file(path)
