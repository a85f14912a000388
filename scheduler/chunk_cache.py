"""Revisions: a job's chunks whose audio the account already rendered are copied, not synthesized.

Why: a corrected book, or one whose lexicon changed, differs from the last render in a few
paragraphs. Each chunk is named by its content key (``scheduler.content_keys``); every chunk a
job renders is also kept under the account's ``cache/`` prefix (``scheduler.objects``) with a row
in ``chunk_cache``, and a later job's chunk with the same key copies that audio into its own
chunk keys and is marked done as *reused*: no usage row, so it is never billed twice, and the
job's ``reusedCharacters`` counts it.

Why a copy and not a pointer: every step after synthesis (assembly, assembly ahead, the QA
check, which renders a failed chunk again over the job's own keys) reads a chunk under its job's
keys, and a job's prefix is what retention deletes. With a copy, deleting or expiring a job can
never take audio another job uses, and a QA re-render never changes what the cache holds. The
cost is storage: a job's chunks are kept twice while both live (``docs/architecture.md``).

Safe to repeat and to kill anywhere: the copies go to deterministic keys before the chunks are
marked done, and the mark is guarded as synthesis's is (``store.db.jobs.mark_chunks_done``).
A cached object that vanished (swept between the look-up and the copy) makes that chunk a miss:
it is rendered and billed like any other.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from sqlalchemy.orm import Session

from books.chunks import ChunkMeta, ChunkVoice, TimedWord, chunk_audio_key, chunk_meta_key
from scheduler.content_keys import ChunkInputs
from scheduler.objects import cache_audio_key, cache_meta_key
from speech.stream_steps import StreamStep
from speech.synthesizer import Controls
from speech.text.offsets import Runs, local, placed
from speech.voices.entries import Voice
from store.db import chunk_cache as cache_repo
from store.db import jobs as job_repo
from store.db.session import SessionFactory
from store.errors import ObjectNotFound
from store.objects.base import ObjectStore

COPY_THREADS = 8


def content_key(
    voice: Voice, units: Sequence[StreamStep], controls: Controls, *, lang: str, stored_rate: int, sentence_gap_ms: int,
    numerics: str,
) -> str:
    """The chunk's content key (``scheduler.content_keys``)."""
    return ChunkInputs.of(
        voice, units, controls, lang=lang, stored_rate=stored_rate, sentence_gap_ms=sentence_gap_ms, numerics=numerics
    ).digest()


@dataclass(frozen=True, slots=True)
class Wanted:
    """A pending chunk of a job as the cache sees it."""

    index: int
    text: str
    content_key: str
    label: ChunkVoice | None = None  # a cast chunk's voice and character, written into its metadata
    sources: Runs | None = None  # where this job's chunk stands in this job's text (word offsets)
    origins: str | None = None  # an SSML chunk's layout of its words (books.job_ssml.origin_key)


def reuse(
    *, sessions: SessionFactory, objects: ObjectStore, account_id: uuid.UUID, job_id: uuid.UUID, attempt: str,
    wanted: Sequence[Wanted],
) -> list[int]:
    """Copy every wanted chunk the account has rendered into the job, under ``attempt``'s keys
    (``scheduler.synthesis.new_attempt``), and mark it done as reused; return the indices marked
    (the rest are to be rendered)."""
    if not wanted:
        return []
    with sessions() as session:
        found = cache_repo.use_entries(session=session, account_id=account_id, keys={w.content_key for w in wanted})
        hits = [w for w in wanted if w.content_key in found]
        # Look before writing, as synthesis does: a chunk another host stored meanwhile keeps its audio.
        pending = job_repo.still_pending(session=session, job_id=job_id, indices=[w.index for w in hits])
    hits = [w for w in hits if w.index in pending]
    if not hits:
        return []
    with ThreadPoolExecutor(max_workers=COPY_THREADS, thread_name_prefix="cache-copy") as pool:
        copied = list(pool.map(lambda w: _copy(objects, account_id, job_id, attempt, w), hits))
    done = [
        (w.index, chunk_audio_key(job_id, w.index, attempt), duration)
        for w, duration in zip(hits, copied, strict=True) if duration is not None
    ]
    with sessions() as session:
        return job_repo.mark_chunks_done(
            session=session, job_id=job_id, done=done, content_keys={w.index: w.content_key for w in hits}, reused=True
        )


def _copy(
    objects: ObjectStore, account_id: uuid.UUID, job_id: uuid.UUID, attempt: str, wanted: Wanted
) -> float | None:
    """The cached chunk as this job's, under ``attempt``'s keys; its duration, or None when the
    cache lost it. The length is the copied audio's own: a voice with random noise (VITS) renders
    a key's chunk a little longer or shorter each time, and a later render of the same key may
    have replaced the cached audio since its row was written."""
    try:
        pcm = objects.get_bytes(cache_audio_key(account_id, wanted.content_key))
        meta: ChunkMeta = json.loads(objects.get_bytes(cache_meta_key(account_id, wanted.content_key)))
    except ObjectNotFound:
        return None
    samples = len(pcm) // 2
    meta = {**meta, "samples": samples, "duration_s": samples / meta["sample_rate"]}
    objects.put_bytes(chunk_audio_key(job_id, wanted.index, attempt), pcm, content_type="audio/L16")
    objects.put_bytes(chunk_meta_key(job_id, wanted.index, attempt), json.dumps(labelled(meta, wanted)).encode(), content_type="application/json")
    return float(meta["duration_s"])


def labelled(meta: ChunkMeta, wanted: Wanted) -> ChunkMeta:
    """The cached metadata as this job's chunk: its own text (texts that differ only in what
    normalisation evens out share a key) and, in a cast, its own character."""
    out: ChunkMeta = {
        "sample_rate": meta["sample_rate"], "duration_s": meta["duration_s"], "words": meta["words"], "text": wanted.text,
    }
    if "samples" in meta:
        out["samples"] = meta["samples"]
    out["words"] = _words_here(meta, wanted)
    if wanted.sources:
        out["sources"] = wanted.sources
    if wanted.origins is not None:
        out["origins"] = wanted.origins
    if wanted.label is not None:
        out |= {"voice": wanted.label["voice"], "speaker": wanted.label["speaker"]}
    return out


def _words_here(meta: ChunkMeta, wanted: Wanted) -> list[TimedWord]:
    """The cached words with their offsets moved into this job's text: a reused chunk of a revised
    book stands elsewhere in it. Where the chunk's written text differs (texts that normalise
    alike share a key), an SSML chunk's words stand otherwise in its markup (``origins``), or either
    place is unknown, the words go without offsets, never wrong ones."""
    old = meta.get("sources")
    movable = (bool(old) and bool(wanted.sources) and meta.get("text") == wanted.text
               and meta.get("origins") == wanted.origins)
    words: list[TimedWord] = []
    for word in meta["words"]:
        moved: TimedWord = {"word": word["word"], "start": word["start"], "end": word["end"]}
        if movable and "textOffset" in word and "textLength" in word and old and wanted.sources:
            start = word["textOffset"]
            here = placed(local((start, start + word["textLength"]), old), wanted.sources)
            moved["textOffset"], moved["textLength"] = here[0], here[1] - here[0]
        words.append(moved)
    return words


def keep(objects: ObjectStore, account_id: uuid.UUID, key: str, pcm: bytes, meta: ChunkMeta) -> None:
    """A rendered chunk's audio and metadata under the account's cache keys (before its row)."""
    plain: ChunkMeta = {k: v for k, v in meta.items() if k not in ("voice", "speaker")}  # type: ignore[assignment]
    objects.put_bytes(cache_audio_key(account_id, key), pcm, content_type="audio/L16")
    objects.put_bytes(cache_meta_key(account_id, key), json.dumps(plain).encode(), content_type="application/json")


def remember(*, session: Session, account_id: uuid.UUID, rendered: Mapping[str, tuple[int, float]]) -> None:
    """Rows for chunks just rendered and kept, ``{content_key: (characters, duration_s)}``, in
    the caller's transaction (the one that marks them done and bills them)."""
    cache_repo.remember(
        session=session, account_id=account_id,
        entries=[
            cache_repo.CachedChunk(key, cache_audio_key(account_id, key), characters, duration)
            for key, (characters, duration) in rendered.items()
        ],
    )
