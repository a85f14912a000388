"""Pass 1 of assembly, one part of a book at a time: its loudness energies and its chunks' peaks.

The parts are measured at the same time (``books.parallel``) and joined exactly: each part
starts on the meter's 100 ms grid, inside a long pause, so its K-weighting filters start at rest
as the whole book's would be there, and :func:`speech.audio.joined_loudness` adds the parts up
to the loudness of the whole. Serial, this pass took 21.8 s of a ten-hour book's assembly.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from books.timeline import Timeline, faded, fetch_audio
from speech.audio import LoudnessMeter
from store.objects.base import ObjectStore

#: A part starts at least this long after the chunk before it has ended: the K-weighting
#: filters' tail has died away by then (their time constants are a few milliseconds).
SETTLE_S: Final = 0.1


@dataclass(frozen=True, slots=True)
class Part:
    first: int  # first chunk
    stop: int  # the chunk after the last
    begin: int  # native samples
    end: int


@dataclass(slots=True)
class Measured:
    meter: LoudnessMeter
    peaks: list[float]  # each chunk's sample peak, faded


def parts(timeline: Timeline, firsts: Sequence[int]) -> list[Part]:
    """Parts starting at the given chunks (the segments' first chunks); where a pause is too short
    to start a part on the grid, the part before simply runs on."""
    n = len(timeline.offsets)
    hop = LoudnessMeter(timeline.native_rate).hop
    starts: list[tuple[int, int]] = [(0, 0)]
    if hop is not None:
        settle = int(SETTLE_S * timeline.native_rate)
        for first in sorted(set(firsts)):
            if first <= 0 or first >= n:
                continue
            pause_start = timeline.offsets[first] - timeline.pauses[first]
            begin = -(-(pause_start + settle) // hop) * hop
            if begin <= timeline.offsets[first] and begin > starts[-1][1]:
                starts.append((first, begin))
    ends = [begin for _, begin in starts[1:]] + [timeline.end]
    stops = [first for first, _ in starts[1:]] + [n]
    return [Part(first, stop, begin, end) for (first, begin), stop, end in zip(starts, stops, ends, strict=True)]


def measure_part(objects: ObjectStore, job_id: uuid.UUID, timeline: Timeline, part: Part) -> Measured:
    """The part's meter (fed silence for the pauses) and its chunks' peaks. Runs in a worker
    process: everything it takes pickles, and it returns a few numbers per 100 ms."""
    rate = timeline.native_rate
    meter = LoudnessMeter(rate)
    peaks: list[float] = []
    position = part.begin
    for index, pcm in zip(range(part.first, part.stop), fetch_audio(objects, job_id, part.first, part.stop, timeline.keys), strict=True):
        if len(pcm) != timeline.length(index):
            raise ValueError(f"chunk {index} has {len(pcm)} samples; its metadata says {timeline.length(index)}")
        samples = faded(pcm, rate)
        start = timeline.offsets[index]
        if start > position:
            meter.add(np.zeros(start - position, dtype=np.float32))
        meter.add(samples)
        position = start + len(samples)
        peaks.append(float(np.max(np.abs(samples))) if len(samples) else 0.0)
    if part.end > position:
        meter.add(np.zeros(part.end - position, dtype=np.float32))
    return Measured(meter, peaks)
