"""Assembly ahead of the last chunk: a book in chapter loudness scope is measured, normalised and
encoded while it is still being synthesized, so assembly ends a short tail after synthesis.

Why a scope of its own: one gain for the whole book is not known before its last chunk is, and
the encoding that needs it (LAME or AAC, most of assembly) could only start after synthesis.
In chapter scope (``loudness_scope: "chapter"``) each chapter gets the one gain that brings it
to the target, the way ACX-style delivery measures each chapter file; within a chapter the
reading keeps its natural dynamics. A chapter is encoded as soon as its chunks are done.

Every step's result goes to the object store under a deterministic key, and is computed only
from chunks marked done, whose audio never changes again: a chunk's loudness
(:class:`ChunkLoudness`) and an encoded segment (``rendering.progressive_segments``). A task
killed anywhere leaves whole objects or none; a repeat, a concurrent twin or the final assembly
finds them and does the rest, with the same arithmetic, so the book is the same sample for
sample however much of it was done ahead (or none: ``LECTOR_ASSEMBLY_AHEAD=false``). Nothing
here bills, and nothing here moves the job's status.

A chunk is measured once every chunk before it is done, since the meter goes on from the chunk
before it (a chapter's first chunk starts a meter of its own, so a chapter's measurement is a
function of the chapter alone); planning hands batches out in book order so that this done
prefix grows while synthesis runs.
"""

from __future__ import annotations

import json
import logging
import math
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np

from books import parallel
from books.conformance import AIM_LU, limiter_ceiling, secant_gain_db
from books.layout import Layout
from books.rendering import (
    Measured,
    Segment,
    encode_segment,
    progressive_segments,
    render_audio,
    uses_segments,
)
from books.timeline import Timeline, faded, fetch_audio
from scheduler.done_part import read_done_part
from scheduler.objects import (
    ahead_chapter_key,
    ahead_loudness_key,
    ahead_loudness_prefix,
    ahead_segment_key,
)
from speech.audio import (
    FILE_FORMATS,
    EncodedSegment,
    LoudnessMeter,
    Metadata,
    MeterState,
    SegmentJoiner,
    frame_size,
    join_skip,
    measure_file,
    normalization_gain_db,
    segments_loudness,
)
from store.db import jobs as job_repo
from store.db.session import SessionFactory
from store.objects.base import ObjectStore
from store.status import JobStatus

log = logging.getLogger("lector.assembly")

_READ_THREADS: Final = 16
#: Corrections a chapter gets ahead, from its own encoded segments decoded (``_check_chapters``).
AHEAD_CORRECTIONS: Final = 2


@dataclass(frozen=True, slots=True)
class ChunkLoudness:
    """One chunk's share of the loudness measurement: the K-weighted energies of the 100 ms
    segments the meter completed over the chunk and the pause before it, and the meter's state
    after it. Joined in order, a chapter's energies are one meter's over the chapter (the filters
    carry their state from chunk to chunk), so its gated loudness follows exactly
    (``speech.audio.segments_loudness``)."""

    energies: list[float]
    state: MeterState
    peak: float  # the faded chunk's sample peak (the limiter's cue)

    def to_json(self) -> bytes:
        s = self.state
        return json.dumps({
            "energies": self.energies, "peak": self.peak, "segments": s.segments, "partial": s.partial,
            "position": s.position, "filters": s.filters,
        }).encode()  # floats as repr: they come back bit for bit

    @classmethod
    def from_json(cls, raw: bytes) -> ChunkLoudness:
        d = json.loads(raw)
        state = MeterState(
            int(d["segments"]), float(d["partial"]), int(d["position"]), tuple((float(a), float(b)) for a, b in d["filters"])
        )
        return cls([float(e) for e in d["energies"]], state, float(d["peak"]))


def measure_chunks(
    objects: ObjectStore, job_id: uuid.UUID, timeline: Timeline, start: int, stop: int, state: MeterState | None,
    chapter_firsts: frozenset[int],
) -> Iterator[ChunkLoudness]:
    """Chunks ``start..stop-1`` measured in order, going on from ``state`` (the chunk before);
    at a chapter's first chunk the meter starts again at rest, before the chapter's pause, as
    the final check measures the chapter (``books.conformance.cuts_s``)."""
    rate = timeline.native_rate
    for index, pcm in zip(range(start, stop), fetch_audio(objects, job_id, start, stop, timeline.keys), strict=True):
        if len(pcm) != timeline.length(index):
            raise ValueError(f"chunk {index} has {len(pcm)} samples; its row says {timeline.length(index)}")
        meter = LoudnessMeter(rate, None if index in chapter_firsts else state)
        if timeline.pauses[index]:
            meter.add(np.zeros(timeline.pauses[index], dtype=np.float32))
        samples = faded(pcm, rate)
        meter.add(samples)
        state = meter.state()
        yield ChunkLoudness(meter.completed(), state, float(np.max(np.abs(samples))) if len(samples) else 0.0)


def chapter_spans(layout: Layout) -> list[tuple[int, int]]:
    """Each chapter's chunks as ``(first, stop)``; chunks before the first chapter form one too."""
    total = len(layout.pauses_ms)
    starts = sorted({0, *(m.chunk for m in layout.chapters if 0 < m.chunk < total)})
    return list(zip(starts, [*starts[1:], total], strict=True)) if total else []


#: Chapter gains are whole tenths of a decibel (a chapter lands within 0.05 dB of the target): a
#: segment's key names the gains its frames were encoded under in a few characters.
GAIN_STEP_DB: Final = 0.1


def chapter_gain(measured: Sequence[ChunkLoudness], rate: int, target_lufs: float) -> int:
    """The gain, in tenths of a decibel, that brings the chapter made of these chunks to
    ``target_lufs`` (0 for silence or less than a gating block)."""
    energies = np.asarray([e for chunk in measured for e in chunk.energies], dtype=np.float64)
    return round(normalization_gain_db(segments_loudness(energies, rate), target_lufs) / GAIN_STEP_DB)


def linear(tenths: int) -> float:
    return float(10 ** (tenths * GAIN_STEP_DB / 20))


@dataclass(frozen=True, slots=True)
class Book:
    """What the steps know of a job: its done prefix (or all of it) and its output."""

    job_id: uuid.UUID
    layout: Layout
    timeline: Timeline  # the done prefix of the book; the whole book when ``closed``
    fmt: str
    out_rate: int
    target_lufs: float

    @property
    def closed(self) -> bool:
        return len(self.timeline.offsets) == len(self.layout.pauses_ms)

    def segment_key(self, segment: Segment, gains: Sequence[int]) -> str:
        """Where a segment's frames under these gains (tenths of a dB, its chunks') are stored."""
        tag = "_".join(str(g) for g in dict.fromkeys(gains[segment.first : segment.stop]))
        return ahead_segment_key(self.job_id, segment.first, segment.stop, self.out_rate, f"{tag}.{self.fmt}")


def encodes_ahead(fmt: str, out_rate: int) -> bool:
    """Formats whose segments join into one file (MP3 at an MP3 rate, m4b); the others are
    measured ahead and encoded in one stream at the end."""
    return uses_segments(fmt, out_rate, workers=2)


def _measured(objects: ObjectStore, book: Book) -> int:
    """How many chunks from the first have their loudness stored."""
    count = 0
    for key in objects.iter_keys(ahead_loudness_prefix(book.job_id)):
        if key != ahead_loudness_key(book.job_id, count):
            break
        count += 1
    return count


def _load(objects: ObjectStore, job_id: uuid.UUID, indices: Sequence[int]) -> dict[int, ChunkLoudness]:
    with ThreadPoolExecutor(max_workers=_READ_THREADS, thread_name_prefix="ahead-read") as pool:
        raws = pool.map(lambda i: objects.get_bytes(ahead_loudness_key(job_id, i)), indices)
        return {i: ChunkLoudness.from_json(raw) for i, raw in zip(indices, raws, strict=True)}


def measure(objects: ObjectStore, book: Book) -> int:
    """Measure and store every chunk of the prefix not measured yet; return how many."""
    n = len(book.timeline.offsets)
    done = min(_measured(objects, book), n)
    state = _load(objects, book.job_id, [done - 1])[done - 1].state if done else None
    firsts = frozenset(first for first, _ in chapter_spans(book.layout))
    for index, chunk in enumerate(measure_chunks(objects, book.job_id, book.timeline, done, n, state, firsts), start=done):
        objects.put_bytes(ahead_loudness_key(book.job_id, index), chunk.to_json(), content_type="application/json")
    return n - done


def _gains(objects: ObjectStore, book: Book) -> list[int | None]:
    """Each complete chapter's chunks' gain (tenths of a dB), stored once computed so that a later
    step reads one object, not the chapter's chunks; None for the chunks of the chapter still
    being synthesized. (Encoding its segments under the gain of its start was tried: on the
    novel's opening the guess missed the chapter's final gain by a tenth of a dB in both
    chapters it was tried on, so the work was done twice on cores synthesis needed.)"""
    n = len(book.timeline.offsets)
    gains: list[int | None] = [None] * n
    for first, stop in chapter_spans(book.layout):
        if stop > n:
            break
        key = ahead_chapter_key(book.job_id, first, stop)
        if objects.exists(key):
            tenths = int(json.loads(objects.get_bytes(key))["gain_tenths_db"])
        else:
            loud = _load(objects, book.job_id, range(first, stop))
            tenths = chapter_gain(list(loud.values()), book.timeline.native_rate, book.target_lufs)
            objects.put_bytes(key, json.dumps({"gain_tenths_db": tenths}).encode(), content_type="application/json")
        gains[first:stop] = [tenths] * (stop - first)
    return gains


def _check_chapters(objects: ObjectStore, book: Book) -> bool:
    """Each complete chapter whose segments are all encoded and that was not checked yet, joined
    and decoded as a listener gets it and measured (``speech.audio.measure_file``); one that
    misses the target by more than ``conformance.AIM_LU`` gets a corrected gain (a secant over
    its tries, as ``conformance.Corrector`` does), under which ``_submit`` encodes it again.
    Returns whether a gain changed.

    Why here: the gain from the chunks' loudness is right only before the limiter and the codec,
    which take 0.4-0.9 LU from speech, so the finished file missed its target nearly every time,
    and the final check (``scheduler.assembly._conform``) then rendered the whole book again
    after synthesis: the tail grew with the book. A chapter checked as it is encoded moves that
    work to while synthesis runs, and ``finish`` does the same for what is left, so a book is
    the same whether or not it was done ahead. The final check still reads the whole file (the
    true peak, and a chapter as the joined file holds it)."""
    if not encodes_ahead(book.fmt, book.out_rate):
        return False
    n = len(book.timeline.offsets)
    gains = _gains(objects, book)
    known = [0 if g is None else g for g in gains]
    segments = _segments(book)
    stored = set(objects.iter_keys(f"jobs/{book.job_id}/ahead/segments/"))
    changed = False
    moved = -1  # the last chapter whose gain changed in this pass: the next one waits for its frames
    for first, stop in chapter_spans(book.layout):
        if stop > n:
            break
        key = ahead_chapter_key(book.job_id, first, stop)
        record = json.loads(objects.get_bytes(key))
        if record.get("checked"):
            continue
        # the segment before the chapter: the stretch the final check reads starts in its frames
        mine = [seg for seg in segments if first <= seg.first and seg.stop <= stop or seg.stop == first]
        keys = [book.segment_key(seg, known) for seg in mine]
        if not mine or mine[-1].stop != stop or any(k not in stored for k in keys):
            continue  # not all encoded yet (the book's open tail)
        if moved == first:
            changed = True  # look again once the chapter before is encoded under its new gain
            continue
        loudness = _decoded_loudness(objects, book, mine, known, first, stop)
        tenths = int(record["gain_tenths_db"])
        tries = [*record.get("tries", []), [tenths, loudness]]
        new = _corrected(tries, book.target_lufs)
        done = new is None or new == tenths or len(tries) > AHEAD_CORRECTIONS
        record = {"gain_tenths_db": tenths if done else new, "checked": done, "tries": tries}
        objects.put_bytes(key, json.dumps(record).encode(), content_type="application/json")
        if not done:
            changed, moved = True, stop
            for segment, stale in zip(mine, keys, strict=True):
                if segment.first >= first:  # encoded under the gain just replaced: never joined now
                    objects.delete(stale)
    return changed


def _corrected(tries: Sequence[Sequence[float]], target_lufs: float) -> int | None:
    """The next gain (tenths of a dB) after ``tries`` of (gain tenths, decoded LUFS); None when
    the last try is within ``AIM_LU`` or measured nothing (silence)."""
    loudness = float(tries[-1][1])
    if not math.isfinite(loudness) or abs(loudness - target_lufs) <= AIM_LU:
        return None
    past = [(float(tenths) * GAIN_STEP_DB, float(lufs)) for tenths, lufs in tries]
    return round(secant_gain_db(past, target_lufs) / GAIN_STEP_DB)


def _decoded_loudness(
    objects: ObjectStore, book: Book, segments: Sequence[Segment], gains: Sequence[int], first: int, stop: int
) -> float:
    """The chapter of chunks ``first`` to ``stop`` as the final check reads it in the whole file
    (``books.conformance.spans``, ``FileLevels.loudness``): the stored ``segments`` (the one
    before the chapter too, whose last frames the chapter's stretch starts in) joined into a
    file, decoded, and the chapter's stretch measured as a file of its own."""
    timeline = book.timeline
    ratio = book.out_rate / timeline.native_rate
    base = segments[0].begin  # where the joined part starts in the whole file (output samples)
    start = 0 if first == 0 else (timeline.offsets[first] - timeline.pauses[first]) * ratio - base
    end = None if stop >= len(timeline.offsets) else (timeline.offsets[stop] - timeline.pauses[stop]) * ratio - base
    cuts = [c / book.out_rate for c in (start, end) if c is not None]  # part 1: the chapter
    with tempfile.TemporaryDirectory(prefix="lector-chapter-") as tmp:
        path = Path(tmp) / f"chapter.{book.fmt}"
        joiner = SegmentJoiner(FILE_FORMATS[book.fmt], book.out_rate, path, metadata=None)
        try:
            for segment in segments:
                joiner.add(EncodedSegment.from_bytes(objects.get_bytes(book.segment_key(segment, gains))))
            joiner.finish()
        except BaseException:
            joiner.abort()
            raise
        levels = measure_file(path, cuts_s=cuts)
    return levels.loudness(1)


def _encoded(pool: Executor, objects: ObjectStore, book: Book) -> list[tuple[str, Future[bytes] | None]]:
    """``_submit`` and wait, then the chapters checked and corrected (``_check_chapters``) until
    every complete chapter is settled: the segments to join, all stored."""
    items = _submit(pool, objects, book)
    _settle([future for _, future in items])
    # Each pass records a try for a chapter at least; a chapter stops at its third.
    for _ in range((AHEAD_CORRECTIONS + 1) * len(chapter_spans(book.layout)) + 1):
        if not _check_chapters(objects, book):
            break
        items = _submit(pool, objects, book)
        _settle([future for _, future in items])
    return [(key, None) for key, _ in items]


def _segments(book: Book) -> list[Segment]:
    audio_format = FILE_FORMATS[book.fmt]
    return progressive_segments(
        book.timeline, book.out_rate, {first for first, _ in chapter_spans(book.layout)},
        frame=frame_size(audio_format, book.out_rate), skip=join_skip(audio_format, book.out_rate), closed=book.closed,
    )


def encode_and_store(objects: ObjectStore, book: Book, levels: Measured, segment: Segment, key: str) -> bytes:
    """One segment encoded and stored; its bytes, so that a join waiting for it need not read
    them back. Runs in a worker process: its arguments and its result pickle."""
    frames = encode_segment(objects, book.job_id, levels, segment, book.fmt, book.out_rate)
    raw = frames.to_bytes()
    objects.put_bytes(key, raw, content_type="application/octet-stream")
    return raw


def _submit(pool: Executor, objects: ObjectStore, book: Book) -> list[tuple[str, Future[bytes] | None]]:
    """Every segment of the prefix whose chapters are complete, in order, with its key: those
    not stored yet are handed to ``pool`` (their future), the others are stored (None)."""
    gains = _gains(objects, book)
    segments = [s for s in _segments(book) if all(g is not None for g in gains[s.first : s.stop])]
    known = [0 if g is None else g for g in gains]
    keys = [book.segment_key(s, known) for s in segments]
    stored = set(objects.iter_keys(f"jobs/{book.job_id}/ahead/segments/"))
    todo = [(s, key) for s, key in zip(segments, keys, strict=True) if key not in stored]
    if not todo:
        return [(key, None) for key in keys]
    loud = _load(objects, book.job_id, [i for s, _ in todo for i in range(s.first, s.stop)])
    peaks = [loud[i].peak if i in loud else 0.0 for i in range(len(gains))]
    levels = Measured(book.timeline, peaks, [linear(g) for g in known], [limiter_ceiling(book.fmt)] * len(known))
    futures = {key: pool.submit(encode_and_store, objects, book, levels, s, key) for s, key in todo}
    return [(key, futures.get(key)) for key in keys]


def _settle(futures: Sequence[Future[bytes] | None]) -> None:
    """Wait for every future; on an error, cancel the ones not started and raise it."""
    try:
        for future in futures:
            if future is not None:
                future.result()
    finally:
        for future in futures:
            if future is not None:
                future.cancel()


def advance(objects: ObjectStore, book: Book, workers: int) -> int:
    """What the done prefix allows: measure its new chunks and encode its ready segments, both
    on the assembly pool, whose processes yield to synthesis (``parallel.NICE``): the chunks'
    measurement is a few seconds of a book's arithmetic, too. Returns the chunks measured (a
    bench and the tests read it)."""
    with parallel.executor(workers) as pool:
        measured = pool.submit(measure, objects, book).result()
        if encodes_ahead(book.fmt, book.out_rate):
            _encoded(pool, objects, book)
    return measured


def finish(objects: ObjectStore, book: Book, path: Path, *, metadata: Metadata | None, workers: int) -> int:
    """The whole book's file at ``path``, from what was done ahead and the rest; its length in
    samples at ``out_rate``."""
    if not book.closed:
        raise ValueError("finish wants the whole book's timeline")
    measure(objects, book)
    timeline = book.timeline
    total_seconds = timeline.end / timeline.native_rate
    if not encodes_ahead(book.fmt, book.out_rate):
        return render_audio(
            objects, book.job_id, levels(objects, book), book.fmt, book.out_rate, path, metadata=metadata, workers=1
        )
    joiner = SegmentJoiner(
        FILE_FORMATS[book.fmt], book.out_rate, path, metadata=metadata, total_seconds=total_seconds
    )
    try:
        with parallel.executor(workers) as pool:
            items = _encoded(pool, objects, book)  # the last chapters encoded and checked
        _join(objects, joiner, items)
        joiner.finish()
    except BaseException:
        joiner.abort()
        raise
    return int(round(timeline.end * book.out_rate / timeline.native_rate))


def levels(objects: ObjectStore, book: Book) -> Measured:
    """The whole book's chunk peaks and chapter gains, as the segments were rendered with."""
    gains = [0 if g is None else g for g in _gains(objects, book)]  # closed: none is None
    loud = _load(objects, book.job_id, range(len(gains)))
    peaks = [loud[i].peak for i in range(len(gains))]
    return Measured(book.timeline, peaks, [linear(g) for g in gains], [limiter_ceiling(book.fmt)] * len(gains))


def render_again(objects: ObjectStore, book: Book, levels: Measured, path: Path, *, metadata: Metadata | None, workers: int) -> int:
    """The whole book under corrected ``levels`` (``books.conformance``), cut where
    :func:`finish` cuts it, so that a book is the same whether or not it was done ahead."""
    if not encodes_ahead(book.fmt, book.out_rate):
        return render_audio(objects, book.job_id, levels, book.fmt, book.out_rate, path, metadata=metadata, workers=1)
    return render_audio(
        objects, book.job_id, levels, book.fmt, book.out_rate, path, metadata=metadata, workers=workers,
        segments=_segments(book),
    )


def _join(objects: ObjectStore, joiner: SegmentJoiner, items: Sequence[tuple[str, Future[bytes] | None]]) -> None:
    """The segments into the file in order, each as soon as it is there: what was encoded ahead
    is joined while the pool still encodes the rest (the last chapter), so the join is not one
    more step after it. A stored segment is read while the one before it is written."""

    def fetch(item: tuple[str, Future[bytes] | None]) -> bytes:
        key, future = item
        return future.result() if future is not None else objects.get_bytes(key)

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ahead-join") as reader:
        following = reader.submit(fetch, items[0])
        for after in [*items[1:], None]:
            raw = following.result()
            if after is not None:
                following = reader.submit(fetch, after)
            joiner.add(EncodedSegment.from_bytes(raw))


def advance_job(
    *, sessions: SessionFactory, objects: ObjectStore, job_id: uuid.UUID, workers: int, out_rate: int, target_lufs: float
) -> int:
    """The ``assemble_ahead`` step: for a running job in chapter scope, the work its done prefix
    allows. Returns the chunks measured (0 for any other job: a message costs one read).

    One step at a time per job, under the job's assembly lock (``jobs.lock_assembly``), which the
    final ``assemble`` waits for: a twin (a message per batch, a redelivery) that finds it held
    leaves at once, and the holder looks again when its pass ends and goes on while more chunks
    are done, so a twin's chunks are not left behind. (Without it twins measured and encoded the
    same segments at once: the same bytes, but twice the work, on cores synthesis needs.)"""
    with sessions() as claim:
        if not job_repo.lock_assembly(session=claim, job_id=job_id, wait=False):
            log.info("job %s: another step is assembling ahead; it will find these chunks", job_id)
            return 0
        measured = prefix = 0
        while (book := _done_prefix(sessions, objects, job_id, out_rate, target_lufs)) is not None:
            if len(book.timeline.offsets) <= prefix:
                break  # nothing done since the last pass
            prefix = len(book.timeline.offsets)
            try:
                measured += advance(objects, book, workers)
            except parallel.BrokenProcessPool:
                parallel.discard(workers)  # a worker process died (OOM?): the retried task gets a new pool
                raise
            log.info("job %s: assembled ahead up to chunk %d of %d", job_id, prefix, len(book.layout.pauses_ms))
    return measured


def _done_prefix(
    sessions: SessionFactory, objects: ObjectStore, job_id: uuid.UUID, out_rate: int, target_lufs: float
) -> Book | None:
    """A running chapter-scope job's done prefix (None for any other job, or none done)."""
    part = read_done_part(
        sessions, objects, job_id, lambda status, params: status == JobStatus.RUNNING and params.chapter_scope
    )
    if part is None:
        return None
    params = part.options
    out_rate = int(params.sampling_rate or out_rate)
    target = float(params.loudness_lufs or target_lufs)
    return Book(job_id, part.layout, part.timeline, params.format, out_rate, target)
