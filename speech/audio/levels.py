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
from collections.abc import Iterator, Sequence
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
    """A decoded file's K-weighted 100 ms energies, part by part, and its true (4x oversampled)
    peak. A file measured whole is one part; one measured with cuts (a chapter-scope book) is one
    part a chapter, each measured as a file of its own would be: its meter starts at rest at the
    cut, on a 100 ms grid of its own."""

    sample_rate: int
    samples: int
    parts: tuple[np.ndarray, ...]  # per part, its completed segments; the last part's partial one too
    part_peaks: tuple[float, ...]  # each part's true peak, linear

    @property
    def true_peak(self) -> float:
        """The file's, linear."""
        return max(self.part_peaks, default=0.0)

    @property
    def part_peaks_dbfs(self) -> list[float]:
        return [20.0 * math.log10(p) if p > 0 else float("-inf") for p in self.part_peaks]

    @property
    def true_peak_dbfs(self) -> float:
        return 20.0 * math.log10(self.true_peak) if self.true_peak > 0 else float("-inf")

    def loudness(self, part: int = 0) -> float:
        """Integrated loudness (LUFS) of a part (the whole file when it was measured without
        cuts); ``-inf`` for silence or less than a gating block."""
        energies = self.parts[part]
        if len(self.parts) == 1:
            return gated_loudness(energies, self.samples, self.sample_rate)
        return gated_loudness(energies, int(round(len(energies) * _STEP_S * self.sample_rate)), self.sample_rate)


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


def measure_file(path: Path, *, cuts_s: Sequence[float] = ()) -> FileLevels:
    """Decode ``path`` and measure it; :class:`EncodeError` when the codec library cannot read it.
    ``cuts_s``: where parts begin (seconds, ascending), each measured on its own (a chapter's
    loudness is then a function of the chapter alone: an edit in another chapter, which moves
    where this one starts, cannot move its measurement; on a 20-second chapter, the whole file's
    grid moved by an edit elsewhere read up to 0.1 LU apart)."""
    meter: LoudnessMeter | None = None
    parts: list[np.ndarray] = []
    rate = 0
    fed = 0  # samples fed to the meters so far
    cuts: list[int] = []  # the cuts ahead of the meter
    bounds = np.zeros(0, dtype=np.int64)  # every cut, for the peaks
    peaks: list[float] = []  # per part
    pending: list[np.ndarray] = []
    held = 0
    context = np.zeros(0, dtype=np.float32)

    def feed(block: np.ndarray) -> None:
        nonlocal meter, fed
        assert meter is not None
        while cuts and cuts[0] < fed + len(block):
            head = cuts.pop(0) - fed
            meter.add(block[:head])
            parts.append(np.asarray(meter.completed(), dtype=np.float64))
            meter = LoudnessMeter(rate)
            block, fed = block[head:], fed + head
        meter.add(block)
        fed += len(block)

    def peak_parts(envelope: np.ndarray, start: int) -> None:
        """Each sample's envelope into the peak of the part the sample is in (``start``: the
        file position of the envelope's first sample)."""
        edges = np.searchsorted(bounds, [start, start + len(envelope)], side="right")
        split = [int(b) - start for b in bounds[edges[0] : edges[1]]]
        for part, piece in enumerate(np.split(envelope, split), start=int(edges[0])):
            if len(piece):
                peaks[part] = max(peaks[part], float(piece.max()))

    def flush() -> None:
        nonlocal context, held
        begin = fed - len(context)  # the file position of the block's first sample
        if meter is not None and pending:
            # The meter is stream-invariant (its filter state and 100 ms segments carry across
            # calls): one call per 10 s instead of one per 1,152-sample frame costs a tenth.
            feed(np.concatenate(pending))
        block = np.concatenate([context, *pending])
        if len(block):
            peak_parts(true_peak_envelope(block, rate), begin)
            context = block[-_CONTEXT:]
        pending.clear()
        held = 0

    try:
        for rate, block in decoded_blocks(path):
            if meter is None:
                meter = LoudnessMeter(rate)
                cuts = sorted(max(0, int(round(s * rate))) for s in cuts_s)  # a part per cut, empty ones too
                bounds = np.asarray(cuts, dtype=np.int64)
                peaks = [0.0] * (len(cuts) + 1)
            pending.append(block)
            held += len(block)
            if held >= _BLOCK_S * rate:
                flush()
        flush()
    except (av.FFmpegError, ValueError, OSError) as exc:
        raise EncodeError(f"cannot decode the file to measure it: {exc}") from exc
    if meter is None:
        return FileLevels(sample_rate=0, samples=0, parts=(np.zeros(0),), part_peaks=(0.0,))
    # the whole file's last segment counts partial, as BS.1770 reads a file; a part's ends where it is cut
    parts.append(meter.energies() if not parts else np.asarray(meter.completed(), dtype=np.float64))
    parts.extend(np.zeros(0) for _ in cuts)  # cuts past the end: empty parts
    return FileLevels(
        sample_rate=rate, samples=fed, parts=tuple(parts), part_peaks=tuple(peaks)
    )
