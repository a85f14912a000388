"""Segments for listening while a book renders: the ``hls_segments`` step (queue ``cpu``).

After every synthesize batch the lifecycle sends this step; it reads the chunks of the book's
contiguous done prefix, cuts what they allow into segments (``books.hls_index``: every
6 s and at each chapter), encodes each as AAC in fragmented MP4 (``speech.audio.aac_frames``,
``speech.audio.fmp4``), stores it under a deterministic key and then appends it to the index
(``hls/index.json``) that the playlist route renders. A segment is listed only after its object
is stored, and a listed one is never made again, so the playlist only grows.

Why here and not on request in the API or inside the synthesize task: the API stays a reader of
small objects (a playlist is one GET of the index, a segment one GET), a listener's first
segment does not wait for an encoder, the engine's cores are not spent on AAC, and the work is
bounded: each chunk is read once more, leveled and encoded at 100-160 times real time on one core
(``docs/scaling.md``).

The audio is the chunks as synthesized on the book's timeline (its pauses, the same edge fades
as assembly), each segment under the gain that the loudness measured so far asks for
(``scheduler.hls_levels``: the book's whole gain is known only once its last chunk is), true-peak
limited. A chunk the QA check renders again after it was listed stays in the stream as first
rendered.

One maker per job at a time (``jobs.lock_hls``): a twin that finds the lock held leaves, and
the holder looks once more after letting go, so no batch's chunks are left waiting.
"""

from __future__ import annotations

import logging
import uuid
from bisect import bisect_right
from dataclasses import dataclass
from typing import Final

import numpy as np

from books.chunks import ChunkKeys
from books.hls_index import KnownAudio, StreamIndex, next_segments
from books.timeline import Timeline, faded
from scheduler.assembly import TARGET_LUFS
from scheduler.done_part import read_done_part
from scheduler.hls_levels import LiveLevel, leveled
from scheduler.objects import hls_index_key, hls_init_key, hls_level_key, hls_segment_key
from speech.audio.aac_frames import AAC_RATES, FRAME, POST_ROLL, PRE_ROLL, encode_stretch
from speech.audio.fmp4 import init_segment, media_segment
from store.db import jobs as job_repo
from store.db.session import SessionFactory, within
from store.errors import ObjectNotFound
from store.objects.base import ObjectStore
from store.status import JobStatus

log = logging.getLogger("lector.hls")

#: The statuses in which a job's done chunks may still become segments.
_STREAMING: Final = frozenset({JobStatus.RUNNING, JobStatus.ASSEMBLING, JobStatus.SUCCEEDED})
INIT_CONTENT_TYPE: Final = "audio/mp4"
SEGMENT_CONTENT_TYPE: Final = "audio/mp4"


def read_index(objects: ObjectStore, job_id: uuid.UUID) -> StreamIndex | None:
    """The job's live-playlist state; None before its first segment."""
    try:
        return StreamIndex.from_json(objects.get_bytes(hls_index_key(job_id)))
    except ObjectNotFound:
        return None


@dataclass(frozen=True, slots=True)
class _Prefix:
    timeline: Timeline  # the done chunks
    known: KnownAudio
    total: int  # the book's chunks
    target_lufs: float
    chapter_scope: bool


def _done_prefix(sessions: SessionFactory, objects: ObjectStore, job_id: uuid.UUID) -> _Prefix | None:
    part = read_done_part(sessions, objects, job_id, lambda status, _: status in _STREAMING)
    if part is None:
        return None
    timeline, layout = part.timeline, part.layout
    prefix, rate = len(timeline.offsets), timeline.native_rate
    following_pause = 0 if part.closed else int(round(layout.pauses_ms[prefix] * rate / 1000))
    chapters = [
        (mark.title, 0 if mark.chunk == 0 else timeline.offsets[mark.chunk] - timeline.pauses[mark.chunk])
        for mark in layout.chapters if mark.chunk < prefix
    ]
    chapters += [(mark.title, timeline.end) for mark in layout.chapters if mark.chunk == prefix and prefix]
    known = KnownAudio(rate, timeline.end + following_pause, timeline.end if part.closed else None, chapters)
    target = float(part.options.loudness_lufs or TARGET_LUFS)
    return _Prefix(timeline, known, part.total, target, part.options.chapter_scope)


class _Chunks:
    """Chunks' faded audio by index, each read once while the segments that need it are made."""

    def __init__(self, objects: ObjectStore, job_id: uuid.UUID, timeline: Timeline) -> None:
        self._objects, self._job_id, self._timeline = objects, job_id, timeline
        self._held: dict[int, np.ndarray] = {}

    def span(self, lo: int, hi: int) -> np.ndarray:
        """The timeline's samples ``[lo, hi)`` as float32 (silence outside the chunks)."""
        out = np.zeros(hi - lo, np.float32)
        t = self._timeline
        for index in list(self._held):
            if t.offsets[index] + t.length(index) <= lo:
                del self._held[index]  # behind every segment still to make
        for index in range(max(0, bisect_right(t.offsets, lo) - 1), len(t.offsets)):
            offset = t.offsets[index]
            if offset >= hi:
                break
            end = offset + t.length(index)
            if end <= lo:
                continue
            if index not in self._held:
                where = t.keys or ChunkKeys(self._job_id)
                pcm = np.frombuffer(self._objects.get_bytes(where.audio_key(index)), dtype="<i2")
                self._held[index] = faded(pcm, t.native_rate)
            audio = self._held[index]
            a, b = max(lo, offset), min(hi, end, offset + len(audio))
            if a < b:
                out[a - lo : b - lo] = audio[a - offset : b - offset]
        return out


def _level(objects: ObjectStore, job_id: uuid.UUID, index: StreamIndex) -> LiveLevel:
    """The measurement after the last listed segment (a fresh one before the first)."""
    if not index.segments:
        return LiveLevel.start(index.rate)
    try:
        return LiveLevel.from_json(objects.get_bytes(hls_level_key(job_id, len(index.segments) - 1)))
    except ObjectNotFound:  # listed before levels were kept: the rest is measured from here
        log.warning("job %s: no live level after segment %d; measuring afresh", job_id, len(index.segments) - 1)
        return LiveLevel.start(index.rate)


def _pass(sessions: SessionFactory, objects: ObjectStore, job_id: uuid.UUID, *, dry: bool = False) -> int:
    """Make (``dry``: count) the segments the done prefix allows beyond those listed."""
    found = _done_prefix(sessions, objects, job_id)
    if found is None:
        return 0
    known = found.known
    index = read_index(objects, job_id) or StreamIndex(known.rate)
    if index.complete:
        return 0
    if known.rate not in AAC_RATES or index.rate != known.rate:
        log.warning("job %s: no live playlist for audio at %d Hz", job_id, known.rate)
        return 0
    planned = next_segments(index.cursor, known)
    if dry or not planned:
        return len(planned)
    chunks = _Chunks(objects, job_id, found.timeline)
    end = known.book_end if known.book_end is not None else known.known_end
    level = _level(objects, job_id, index)
    chapter_cuts = {at // FRAME * FRAME for _, at in known.chapters}
    for start, stop in planned:
        lo, hi = max(0, start - PRE_ROLL), min(end, stop + POST_ROLL)
        audio, level = leveled(
            level, chunks.span(lo, hi), slice(start - lo, stop - lo), rate=known.rate, target_lufs=found.target_lufs,
            chapter_scope=found.chapter_scope, new_chapter=start in chapter_cuts,
        )
        stretch = encode_stretch(audio, lo, start, stop, known.rate)
        number = len(index.segments)
        objects.put_bytes(hls_level_key(job_id, number), level.to_json(), content_type="application/json")
        if number == 0:
            objects.put_bytes(hls_init_key(job_id), init_segment(known.rate, stretch.config), content_type=INIT_CONTENT_TYPE)
        data = media_segment(number + 1, start, stretch.samples)
        objects.put_bytes(hls_segment_key(job_id, number), data, content_type=SEGMENT_CONTENT_TYPE)
        index = index.with_segment(start, stop, known.chapters, last=stop == known.book_end)
        objects.put_bytes(hls_index_key(job_id), index.to_json(), content_type="application/json")
    log.info("job %s: %d live segments, %.1f s listed", job_id, len(index.segments), index.cursor / known.rate)
    return len(planned)


def advance_stream(*, sessions: SessionFactory, objects: ObjectStore, job_id: uuid.UUID) -> int:
    """The ``hls_segments`` step: the segments made (0 when another step holds the job's lock)."""
    made = 0
    while True:
        with sessions() as claim:
            if not job_repo.lock_hls(session=claim, job_id=job_id):
                return made  # the holder looks again after letting go
            # The looks under the lock ride in its transaction (READ COMMITTED: each sees what
            # synthesis committed since): one commit for all of them, not one a look.
            while step := _pass(within(claim), objects, job_id):
                made += step
        if not _pass(sessions, objects, job_id, dry=True):
            return made
