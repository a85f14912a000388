"""What a delivered file measures once decoded: its BS.1770 energies and its true peak.

Why decode: a lossy codec moves both figures. LAME and AAC cut the top of the spectrum, where
K-weighting counts speech at +4 dB, and their quantisation adds inter-sample overs after the
limiter (on the novel's opening an MP3 lost 0.4 LU and gained up to 0.3 dB of peak against the
PCM it was made from). So the assembler checks the file a listener gets, not the samples it
encoded, and corrects what the codec moved (``books.conformance``).

The file is decoded frame by frame and measured 10 s at a time (a :class:`LoudnessMeter` and the
true-peak envelope), so a ten-hour book costs a decoder's pass and little memory.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import av
import numpy as np

from speech.audio.loudness import LoudnessMeter, gated_loudness, true_peak_envelope
from speech.errors import EncodeError

_BLOCK_S: Final = 10.0  # decoded audio per true-peak pass
_CONTEXT: Final = 64  # samples carried between passes, so no inter-sample peak falls between two
_STEP_S: Final = 0.1  # the meter's energy segments
_MONO_FLOAT: Final = frozenset({"flt", "fltp"})  # one channel: packed and planar are the same samples


@dataclass(frozen=True, slots=True)
class FileLevels:
    """A decoded file's 100 ms K-weighted energies and its true (4x oversampled) peak."""

    sample_rate: int
    samples: int
    energies: np.ndarray
    true_peak: float  # linear

    @property
    def true_peak_dbfs(self) -> float:
        return 20.0 * math.log10(self.true_peak) if self.true_peak > 0 else float("-inf")

    def loudness(self, start_s: float = 0.0, end_s: float | None = None) -> float:
        """Integrated loudness (LUFS) of the whole file, or of a stretch of it (a chapter) cut on
        the meter's 100 ms grid; ``-inf`` for silence or less than a gating block."""
        return self.grid_loudness(grid_index(start_s), None if end_s is None else grid_index(end_s))

    def grid_loudness(self, first: int, stop: int | None) -> float:
        """The stretch from 100 ms segment ``first`` to ``stop`` (None: the end)."""
        first = max(0, first)
        if first == 0 and stop is None:
            return gated_loudness(self.energies, self.samples, self.sample_rate)
        stop = len(self.energies) if stop is None else min(len(self.energies), stop)
        if stop <= first:
            return float("-inf")
        part = self.energies[first:stop]
        return gated_loudness(part, int(round(len(part) * _STEP_S * self.sample_rate)), self.sample_rate)


def grid_index(seconds: float) -> int:
    """The 100 ms segment a stretch starting or ending at ``seconds`` is cut at."""
    return int(round(seconds / _STEP_S))


def decoded_blocks(path: Path) -> Iterator[tuple[int, np.ndarray]]:
    """``(sample rate, float32 mono block)`` for every decoded frame, mixed down to mono. PyAV's
    errors pass through: the caller translates them (:func:`measure_file`)."""
    with av.open(str(path)) as container:
        stream = container.streams.audio[0]
        rate = int(stream.codec_context.sample_rate)
        resampler: av.AudioResampler | None = None
        for frame in container.decode(stream):
            if frame.format.name in _MONO_FLOAT and frame.layout.nb_channels == 1 and frame.sample_rate == rate:
                # MP3 and AAC decode to mono float already: reading the plane skips a resampler
                # pass per frame, a third of a long book's decode
                yield rate, frame.to_ndarray().reshape(-1)
                continue
            resampler = resampler or av.AudioResampler(format="flt", layout="mono", rate=rate)
            for out in resampler.resample(frame):
                yield rate, out.to_ndarray().reshape(-1)
        if resampler is not None:
            for out in resampler.resample(None):
                yield rate, out.to_ndarray().reshape(-1)


def measure_file(path: Path, *, lead: int = 0) -> FileLevels:
    """Decode ``path`` and measure it; :class:`EncodeError` when the codec library cannot read it.
    ``lead``: zeros measured before the first sample, so that a part of a longer file cut from it
    (``scheduler.progressive_assembly``) is read on that file's 100 ms grid."""
    meter: LoudnessMeter | None = None
    rate = 0
    peak = 0.0
    pending: list[np.ndarray] = []
    held = 0
    context = np.zeros(0, dtype=np.float32)

    def flush() -> None:
        nonlocal peak, context, held
        if meter is not None and pending:
            # The meter is stream-invariant (its filter state and 100 ms segments carry across
            # calls): one call per 10 s instead of one per 1,152-sample frame costs a tenth.
            meter.add(np.concatenate(pending))
        block = np.concatenate([context, *pending])
        if len(block):
            peak = max(peak, float(true_peak_envelope(block, rate).max()))
            context = block[-_CONTEXT:]
        pending.clear()
        held = 0

    try:
        for rate, block in decoded_blocks(path):
            if meter is None:
                meter = LoudnessMeter(rate)
                if lead:
                    meter.add(np.zeros(lead, dtype=np.float32))
            pending.append(block)
            held += len(block)
            if held >= _BLOCK_S * rate:
                flush()
        flush()
    except (av.FFmpegError, ValueError, OSError) as exc:
        raise EncodeError(f"cannot decode the file to measure it: {exc}") from exc
    if meter is None:
        return FileLevels(sample_rate=0, samples=0, energies=np.zeros(0), true_peak=0.0)
    return FileLevels(
        sample_rate=rate, samples=int(round(meter.duration * rate)), energies=meter.energies(), true_peak=peak
    )
