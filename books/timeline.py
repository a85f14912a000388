"""A finished job's timeline, in the voice's native samples, and its chunks read in order.

Where every chunk starts follows from the plan's pauses and the chunks' lengths alone, so it is
known before any audio is read: that is what lets assembly cut a book into segments and measure
and encode them at the same time (``books.measuring``, ``books.rendering``).
"""

from __future__ import annotations

import json
import uuid
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final

import numpy as np

from books.chunks import ChunkKeys, ChunkMeta
from speech.audio import fade_edges
from store.objects.base import ObjectStore

FADE_MS: Final = 5.0
PREFETCH: Final = 6
_META_THREADS: Final = 16


@dataclass(frozen=True, slots=True)
class Timeline:
    native_rate: int
    pauses: Sequence[int]  # silence before each chunk
    offsets: Sequence[int]  # where each chunk's audio starts (after its pause)
    end: int  # total samples
    keys: ChunkKeys | None = None  # where the chunks are (their rows' keys); None: the attempt-less keys

    @classmethod
    def build(
        cls, native_rate: int, pauses_ms: Sequence[int], lengths: Sequence[int], keys: ChunkKeys | None = None,
    ) -> Timeline:
        if len(pauses_ms) != len(lengths):
            raise ValueError(f"{len(lengths)} chunk lengths for a plan of {len(pauses_ms)} chunks")
        pauses = [int(round(ms * native_rate / 1000)) for ms in pauses_ms]
        offsets: list[int] = []
        position = 0
        for pause, length in zip(pauses, lengths, strict=True):
            position += pause
            offsets.append(position)
            position += int(length)
        return cls(native_rate, pauses, offsets, position, keys)

    def length(self, index: int) -> int:
        following = self.offsets[index + 1] - self.pauses[index + 1] if index + 1 < len(self.offsets) else self.end
        return following - self.offsets[index]


def fetch_audio(
    objects: ObjectStore, job_id: uuid.UUID, start: int, stop: int, keys: ChunkKeys | None = None,
) -> Iterator[np.ndarray]:
    """Chunks ``start..stop-1``'s int16 samples in order, fetched ``PREFETCH`` ahead, from the
    keys their rows recorded (``keys``). Their metadata is read once per book, by the thread that
    writes the timings (:func:`fetch_metas`)."""
    where = keys or ChunkKeys(job_id)

    def fetch(index: int) -> np.ndarray:
        return np.frombuffer(objects.get_bytes(where.audio_key(index)), dtype="<i2")

    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="assemble-fetch") as pool:
        pending: deque[Future[np.ndarray]] = deque()
        next_index = start
        try:
            while next_index < stop or pending:
                while next_index < stop and len(pending) < PREFETCH:
                    pending.append(pool.submit(fetch, next_index))
                    next_index += 1
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def fetch_metas(
    objects: ObjectStore, job_id: uuid.UUID, count: int, keys: ChunkKeys | None = None,
) -> Iterator[ChunkMeta]:
    """Every chunk's meta (text, word timings, length) in order, many requests in flight: they
    are small, so an object store's latency is what they cost."""
    where = keys or ChunkKeys(job_id)
    with ThreadPoolExecutor(max_workers=_META_THREADS, thread_name_prefix="assemble-meta") as pool:
        pending: deque[Future[bytes]] = deque()
        next_index = 0
        try:
            while next_index < count or pending:
                while next_index < count and len(pending) < 4 * _META_THREADS:
                    pending.append(pool.submit(objects.get_bytes, where.meta_key(next_index)))
                    next_index += 1
                meta: ChunkMeta = json.loads(pending.popleft().result())
                yield meta
        finally:
            for future in pending:
                future.cancel()


def meta_length(meta: ChunkMeta) -> int:
    """A chunk's length in samples: stored since chunks carry it, else exact from its duration
    (``len / rate`` in a double round-trips)."""
    if "samples" in meta:
        return int(meta["samples"])
    return int(round(float(meta["duration_s"]) * int(meta["sample_rate"])))


def faded(pcm: np.ndarray, rate: int) -> np.ndarray:
    """A chunk as float32 with click-free edges (each chunk is a separate synthesis)."""
    return fade_edges(pcm.astype(np.float32) * np.float32(1.0 / 32767.0), rate, FADE_MS)


def done_prefix(
    objects: ObjectStore, durations: Sequence[float | None], keys: ChunkKeys, pauses_ms: Sequence[int]
) -> Timeline | None:
    """The timeline of the chunks done from the book's start, in order (a running book's
    listenable or measurable part), at the rate its first chunk was stored at; None before the
    first chunk is done. Its length is the prefix's: ``len(timeline.offsets)``."""
    prefix = next((i for i, d in enumerate(durations) if d is None), len(durations))
    if not prefix:
        return None
    rate = int(json.loads(objects.get_bytes(keys.meta_key(0)))["sample_rate"])
    lengths = [int(round(float(d) * rate)) for d in durations[:prefix] if d is not None]
    return Timeline.build(rate, pauses_ms[:prefix], lengths, keys)
