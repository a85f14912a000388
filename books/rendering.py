"""Pass 2 of assembly: the book's chunks, with their pauses, resampled, under the one gain,
true-peak limited and encoded, holding about one chunk in memory per worker.

The output timeline is fixed before any audio is rendered: chunk ``i`` starts at its native
offset times ``out_rate / native_rate``, and the file is exactly ``round(native_end * ratio)``
samples long. That lets the work be cut into *segments*, each rendered from its own stream
resampler and, for MP3 and m4b, encoded on its own core (see ``speech.audio.files``). Segments join only
inside long pauses (paragraph or chapter), where both sides are digital silence, so a fresh
resampler and a fresh encoder at the join are inaudible. Other formats are one segment, with the
encoder on a thread of its own beside the arithmetic.
"""

from __future__ import annotations

import math
import queue
import threading
import uuid
from collections import deque
from collections.abc import Collection, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from books import parallel
from books.timeline import Timeline, faded, fetch_audio
from speech.audio import (
    FILE_FORMATS,
    MP3_RATES,
    SEGMENTED,
    AudioFormat,
    EncodedSegment,
    Metadata,
    SegmentEncoder,
    SegmentJoiner,
    StreamResampler,
    frame_size,
    join_skip,
    limit_true_peak,
    open_file_encoder,
)
from store.objects.base import ObjectStore

#: A stretch whose sample peak after the gain stays this far under the ceiling cannot have a true
#: peak over it (inter-sample overs of speech are well under 1 dB): it skips the limiter.
LIMIT_MARGIN: Final = 10 ** (-3.0 / 20)
_PEAK_CONTEXT_S: Final = 0.05
_QUEUED_BLOCKS: Final = 4
JOIN_PAUSE_MS: Final = 700  # segments join only in pauses at least this long
MIN_SEGMENT_S: Final = 60.0
MAX_SEGMENT_S: Final = 600.0
TARGET_SEGMENT_S: Final = 60.0  # segments cut while synthesis runs (chapters are cut anyway)


def limit_peaks(y: np.ndarray, rate: int, ceiling: float) -> np.ndarray:
    """True-peak limit only the stretches around samples near the ceiling: speech peaks are a few
    per second, and the oversampled envelope is the dearest step of assembly. Each stretch keeps
    ``_PEAK_CONTEXT_S`` of quiet audio on both sides, where the limiter's gain is back at one,
    so the stretches join the untouched audio seamlessly."""
    hot = np.flatnonzero(np.abs(y) > ceiling * LIMIT_MARGIN)
    if not hot.size:
        return y
    context = int(_PEAK_CONTEXT_S * rate)
    breaks = np.flatnonzero(np.diff(hot) > 2 * context)
    firsts = np.concatenate([[hot[0]], hot[breaks + 1]])
    lasts = np.concatenate([hot[breaks], [hot[-1]]])
    for first, last in zip(firsts, lasts, strict=True):
        a, b = max(int(first) - context, 0), min(int(last) + context + 1, len(y))
        y[a:b] = limit_true_peak(y[a:b], rate, 20 * math.log10(ceiling))
    return y


@dataclass(frozen=True, slots=True)
class Measured:
    """The timeline and what pass 1 measured: all pass 2 needs besides the chunks themselves."""

    timeline: Timeline
    peaks: Sequence[float]  # each chunk's sample peak
    gains: Sequence[float]  # each chunk's gain, linear: the book's one gain, or its chapter's
    #: Each chunk's limiter ceiling (true peak, linear), as its gain is: under the promised one by
    #: the codec's headroom (``books.conformance.limiter_ceiling``), since encoding moves peaks
    #: after the limiter, and lowered for a chapter whose decoded peak was still over it.
    ceilings: Sequence[float]

    @classmethod
    def one_gain(cls, timeline: Timeline, peaks: Sequence[float], gain: float, ceiling: float) -> Measured:
        return cls(timeline, peaks, [gain] * len(timeline.offsets), [ceiling] * len(timeline.offsets))


@dataclass(frozen=True, slots=True)
class Segment:
    first: int  # first chunk
    stop: int  # the chunk after the last
    begin: int  # output samples: where this segment's audio starts on the timeline
    end: int  # ... and where it ends


def plan_segments(timeline: Timeline, out_rate: int, count: int, *, frame: int = 1, skip: int = 0) -> list[Segment]:
    """Up to ``count`` segments of similar length joined in long pauses. Every segment but the
    last is a multiple of ``frame`` samples long; every one but the first starts ``skip``
    samples into its pause (``speech.audio.files`` explains both)."""
    ratio = out_rate / timeline.native_rate
    total = int(round(timeline.end * ratio))
    n = len(timeline.offsets)
    if count <= 1 or n < 2:
        return [Segment(0, n, 0, total)]
    target = max(total / count, MIN_SEGMENT_S * out_rate)
    segments: list[Segment] = []
    first, begin = 0, 0
    for i in range(1, n):
        pause_out = int(timeline.pauses[i] * ratio)
        pause_start = int(round((timeline.offsets[i] - timeline.pauses[i]) * ratio))
        if pause_out < 4 * frame + skip or timeline.pauses[i] * 1000 < JOIN_PAUSE_MS * timeline.native_rate:
            continue
        if pause_start - begin < target or total - pause_start < target / 2:
            continue
        end = begin + (pause_start + 2 * frame - begin) // frame * frame  # 1-2 frames into the pause
        segments.append(Segment(first, i, begin, end))
        first, begin = i, end + skip
    segments.append(Segment(first, n, begin, total))
    return segments


def progressive_segments(
    timeline: Timeline, out_rate: int, breaks: Collection[int], *, frame: int, skip: int, closed: bool
) -> list[Segment]:
    """Segments that can be cut while the book is still being synthesized: every cut depends only
    on the chunks before it, so the segments a prefix of the book gives are the segments the whole
    book gives (``scheduler.progressive_assembly`` encodes them as they are ready). A cut goes where a chunk in
    ``breaks`` starts (a chapter: its gain differs in chapter scope), or at the first long pause
    after ``TARGET_SEGMENT_S``, wherever the pause leaves room for the join. ``closed``: the
    timeline is the whole book, so its last segment ends with it; else the open tail is left out."""
    ratio = out_rate / timeline.native_rate
    segments: list[Segment] = []
    first, begin = 0, 0
    for i in range(1, len(timeline.offsets)):
        pause_out = int(timeline.pauses[i] * ratio)
        pause_start = int(round((timeline.offsets[i] - timeline.pauses[i]) * ratio))
        if pause_out < 4 * frame + skip or timeline.pauses[i] * 1000 < JOIN_PAUSE_MS * timeline.native_rate:
            continue
        if i not in breaks and pause_start - begin < TARGET_SEGMENT_S * out_rate:
            continue
        end = begin + (pause_start + 2 * frame - begin) // frame * frame  # 1-2 frames into the pause
        segments.append(Segment(first, i, begin, end))
        first, begin = i, end + skip
    if closed:
        segments.append(Segment(first, len(timeline.offsets), begin, int(round(timeline.end * ratio))))
    return segments


def _segment_blocks(objects: ObjectStore, job_id: uuid.UUID, book: Measured, segment: Segment, out_rate: int) -> Iterator[np.ndarray]:
    """The segment's output samples, ``segment.begin`` to ``segment.end``, block by block."""
    timeline = book.timeline
    ratio = out_rate / timeline.native_rate
    start_native = timeline.offsets[segment.first] - timeline.pauses[segment.first] if segment.first else 0
    position = int(round(start_native * ratio))  # output sample of the resampler's first output
    resampler = StreamResampler(timeline.native_rate, out_rate)
    previous_peak = 0.0  # after its gain

    def cut(y: np.ndarray, gain: np.float32, peak: float, ceiling: float) -> np.ndarray:
        nonlocal position
        a, b = max(segment.begin - position, 0), min(segment.end - position, len(y))
        position += len(y)
        if b <= a:
            return y[:0]
        y = y[a:b] * gain
        return limit_peaks(y, out_rate, ceiling) if peak > ceiling * LIMIT_MARGIN else y

    chunks = fetch_audio(objects, job_id, segment.first, segment.stop, timeline.keys)
    gain, ceiling = np.float32(1.0), 1.0
    for index, pcm in zip(range(segment.first, segment.stop), chunks, strict=True):
        samples = faded(pcm, timeline.native_rate)
        pause = timeline.pauses[index]
        block = np.concatenate([np.zeros(pause, dtype=np.float32), samples]) if pause else samples
        gain, ceiling = np.float32(book.gains[index]), float(book.ceilings[index])
        peak = book.peaks[index] * float(gain)
        # The resampler holds back a few milliseconds: a block may end with the previous chunk's
        # tail, under this chunk's gain and ceiling (they differ only at a chapter's start, in
        # chapter scope, where that tail is the faded end of the chapter before: silence or nearly).
        yield cut(resampler.process(block), gain, max(peak, previous_peak), ceiling)
        previous_peak = peak
    yield cut(resampler.flush(), gain, previous_peak, ceiling)
    if position < segment.end:  # the rest of the pause up to the join (or rounding at the end)
        yield np.zeros(segment.end - max(position, segment.begin), dtype=np.float32)


class _EncoderThread:
    """Encoding runs beside the rest of the pass (the codec releases the GIL): blocks go through a
    short queue, so at most ``_QUEUED_BLOCKS`` blocks wait in memory."""

    def __init__(self, encoder: Any) -> None:
        self._encoder = encoder
        self._queue: queue.Queue[np.ndarray | None] = queue.Queue(maxsize=_QUEUED_BLOCKS)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="assemble-encode", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (block := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self._encoder.write(block)
                except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                    self._error = exc

    def write(self, block: np.ndarray) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put(block)

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error


def uses_segments(fmt: str, out_rate: int, workers: int) -> bool:
    """MP3 (at a rate MP3 has) and m4b are encoded in segments on the workers; the rest in one
    stream: Opus and FLAC encode several times faster than LAME, WAV needs no encoding."""
    audio_format = FILE_FORMATS[fmt]
    if audio_format is AudioFormat.MP3 and out_rate not in MP3_RATES:
        return False
    return audio_format in SEGMENTED and workers > 1


def render_audio(
    objects: ObjectStore, job_id: uuid.UUID, book: Measured, fmt: str, out_rate: int, path: Path, *,
    metadata: Metadata | None, workers: int, segments: Sequence[Segment] | None = None,
) -> int:
    """Write the audio file; return its length in samples at ``out_rate``. ``segments``: cut the
    file where these say (chapter scope renders again where it cut ahead), else where
    :func:`encoded_segments` does."""
    if segments is not None:
        return _render_segments(objects, job_id, book, fmt, out_rate, path, metadata=metadata, workers=workers,
                                segments=segments)
    if uses_segments(fmt, out_rate, workers):
        return _render_segments(objects, job_id, book, fmt, out_rate, path, metadata=metadata, workers=workers)
    segment = plan_segments(book.timeline, out_rate, 1)[0]
    timeline = book.timeline
    encoder = open_file_encoder(fmt, out_rate, path, metadata=metadata, total_seconds=timeline.end / timeline.native_rate)
    try:
        sink = _EncoderThread(encoder)
        try:
            for block in _segment_blocks(objects, job_id, book, segment, out_rate):
                sink.write(block)
        finally:
            sink.close()
        encoder.finish()
    except BaseException:
        encoder.abort()
        raise
    return segment.end


def encoded_segments(timeline: Timeline, fmt: str, out_rate: int, workers: int) -> list[Segment]:
    """Enough segments to keep every worker busy, and none so long that its frames (held until
    the segments before it are written) weigh much: ten minutes at 64 kb/s is 5 MB."""
    audio_format = FILE_FORMATS[fmt]
    count = max(2 * workers, math.ceil(timeline.end / timeline.native_rate / MAX_SEGMENT_S))
    return plan_segments(
        timeline, out_rate, count, frame=frame_size(audio_format, out_rate), skip=join_skip(audio_format, out_rate)
    )


def encode_segment(
    objects: ObjectStore, job_id: uuid.UUID, book: Measured, segment: Segment, fmt: str, out_rate: int
) -> EncodedSegment:
    """One segment's frames. Runs in a worker process (``books.parallel``): its arguments
    and its result pickle, and it holds one chunk and the segment's frames in memory."""
    encoder = SegmentEncoder(FILE_FORMATS[fmt], out_rate)
    for block in _segment_blocks(objects, job_id, book, segment, out_rate):
        encoder.write(block)
    return encoder.finish()


def _render_segments(
    objects: ObjectStore, job_id: uuid.UUID, book: Measured, fmt: str, out_rate: int, path: Path, *,
    metadata: Metadata | None, workers: int, segments: Sequence[Segment] | None = None,
) -> int:
    timeline = book.timeline
    segments = segments or encoded_segments(timeline, fmt, out_rate, workers)
    joiner = SegmentJoiner(
        FILE_FORMATS[fmt], out_rate, path, metadata=metadata, total_seconds=timeline.end / timeline.native_rate
    )
    try:
        with parallel.executor(workers) as pool:
            pending: deque[Future[EncodedSegment]] = deque()
            for segment in segments:  # at most 2 x workers segments' frames wait in memory
                if len(pending) >= 2 * workers:
                    joiner.add(pending.popleft().result())
                pending.append(pool.submit(encode_segment, objects, job_id, book, segment, fmt, out_rate))
            while pending:
                joiner.add(pending.popleft().result())
        joiner.finish()
    except BaseException:
        joiner.abort()
        raise
    return segments[-1].end
