"""Synthesizing one batch of a job's chunks.

Each chunk's audio (int16 PCM at the voice's native rate) and its word timings are written under
keys of this run's own (``books.chunks.chunk_audio_key``'s attempt) *before* the chunk is
marked done; the mark records that key on the chunk row, and the usage row is written in the same
transaction (``scheduler.chunk_record``; one for the batch, with its hand-out to the next, or one
per engine call's group when the live playlist follows): a worker killed anywhere in between
leaves those chunks pending and unbilled, and the redelivered task redoes exactly them.
A chunk already done is skipped, at the start and again just before its audio is written; and a
frozen host that wakes after its task went elsewhere and writes anyway writes beside the audio
another host stored, never over it: readers take the key the row names.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from itertools import repeat

import numpy as np
from sqlalchemy.orm import Session

from books.casting import Cast, matched
from books.chunks import ChunkMeta, ChunkVoice, TimedWord, chunk_audio_key, chunk_meta_key
from books.job_ssml import Step, origin_key, segments_of
from books.layout import Layout
from scheduler import chunk_cache
from scheduler.chunk_record import ChunkRecord
from scheduler.job_params import JobParams
from scheduler.lexicons import LexiconLimits, for_request
from scheduler.objects import plan_key
from speech.engines.base import numerics_of
from speech.stream_steps import StreamStep, located, plan_segments, steps_for_request
from speech.synthesizer import BatchSynthesizer, Controls
from speech.text.offsets import Runs, placed
from speech.text.pls import PronunciationLexicon
from speech.types import AudioChunk, WordTiming
from speech.voices.catalog import VoiceCatalog
from speech.voices.entries import Voice
from store.db import jobs as job_repo
from store.db.session import SessionFactory
from store.objects.base import ObjectStore
from store.status import JobStatus

SENTENCE_GAP_MS = 250
STORE_THREADS = 8


@dataclass(frozen=True, slots=True)
class BatchResult:
    synthesized: int  # chunks this run marked done: rendered, or reused from the account's cache
    complete: bool  # every chunk of the job is done: time to assemble
    canceled: bool = False
    billed: int = 0  # characters those chunks billed (their usage rows)
    model: str = ""  # the job's model, what they were billed under
    chapter_scope: bool = False  # the job's loudness is per chapter: assembly can follow (scheduler.progressive_assembly)
    qa: bool = False  # the job asked for the speech-recognition check (scheduler.qa) before assembly
    reused: int = 0  # of ``synthesized``, the chunks copied from the account's cache (not billed)


def join_sentences(
    chunks: list[AudioChunk], sample_rate: int, gap_ms: int = SENTENCE_GAP_MS, runs: Runs | None = None
) -> tuple[np.ndarray, list[TimedWord]]:
    """One chunk's sentences back to back with a short gap; word times shifted to the chunk start.
    ``runs``: where the chunk's text stands in the job's text, which word offsets then count in.
    A piece with no audio is an SSML ``mark``: its name is a word timing where it falls (flagged
    ``mark``), and no gap is added for it. A piece of silence saying nothing is an SSML
    ``break`` at the book's edge: exactly as long as asked, no gap beside it."""
    gap = np.zeros(int(sample_rate * gap_ms / 1000), dtype=np.float32)
    parts: list[np.ndarray] = []
    words: list[TimedWord] = []
    offset = 0
    after_pause = False
    for piece in chunks:
        if not len(piece.samples):
            words.extend({"word": w.word, "start": offset / sample_rate, "end": offset / sample_rate, "mark": True}
                         for w in piece.words)
            continue
        pause = not piece.text and not piece.words and not np.any(piece.samples)
        if parts and not pause and not after_pause:
            parts.append(gap)
            offset += len(gap)
        after_pause = pause
        start_s = offset / sample_rate
        words.extend(_timed(w, start_s, runs) for w in piece.words)
        parts.append(piece.samples.astype(np.float32))
        offset += len(piece.samples)
    samples = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    return samples, words


def _timed(word: WordTiming, shift: float, runs: Runs | None) -> TimedWord:
    timed: TimedWord = {"word": word.word, "start": shift + word.start, "end": shift + word.end}
    if word.source is not None and runs:
        start, end = placed(word.source, runs)
        timed["textOffset"], timed["textLength"] = start, end - start
    return timed


def _groups(todo: list[tuple[int, str]], group_chars: int) -> list[list[tuple[int, str]]]:
    groups: list[list[tuple[int, str]]] = []
    used = group_chars
    for item in todo:
        if used + len(item[1]) > group_chars:
            groups.append([])
            used = 0
        groups[-1].append(item)
        used += len(item[1])
    return groups


def _voiced_groups(
    todo: list[tuple[int, str]], group_chars: int, layout: Layout | None
) -> list[tuple[str | None, list[tuple[int, str]]]]:
    """The engine calls' groups, each of one voice (None: the job's one voice, no cast)."""
    if layout is None:
        return [(None, group) for group in _groups(todo, group_chars)]
    by_voice: dict[str, list[tuple[int, str]]] = {}
    for item in todo:
        by_voice.setdefault(layout.voices[item[0]], []).append(item)
    return [(name, group) for name, items in by_voice.items() for group in _groups(items, group_chars)]


@dataclass(frozen=True, slots=True)
class Voicing:
    """A cast chunk's voice and who it speaks for, and the book's rate every voice is brought to."""

    voice: str
    speaker: str | None
    book_rate: int


def new_attempt() -> str:
    """A name for one run's writes: every task run (and every QA redo) stores its chunks under
    keys of its own, so no run's write can replace another's (``scheduler.objects``)."""
    return uuid.uuid4().hex[:16]


def store_chunk(
    objects: ObjectStore, job_id: uuid.UUID, index: int, text: str, pieces: list[AudioChunk], rate: int,
    attempt: str, voicing: Voicing | None = None, gains_db: Sequence[float] = (), runs: Runs | None = None,
    keep_as: tuple[uuid.UUID, str] | None = None, origins: str | None = None,
) -> float:
    """Audio and timings go to the store, under ``attempt``'s keys, before the chunk is marked
    done: a crash between leaves it pending, and the redo writes keys of its own; the mark
    records the key of the attempt that won. ``gains_db``: an SSML job's volume of each piece,
    applied after the chunk is brought to the book's level, so the volume asked is heard.
    ``keep_as`` (account, content key): also under the account's chunk cache
    (``scheduler.chunk_cache``), for its later jobs. ``origins``: an SSML chunk's
    ``books.job_ssml.origin_key``, kept beside its words."""
    samples, words = join_sentences(pieces, rate, runs=runs)
    level = samples
    if any(gains_db):
        samples, _ = join_sentences([_louder(p, g) for p, g in zip(pieces, gains_db, strict=True)], rate)
    if voicing is not None:
        samples, rate = matched(samples, rate, voicing.book_rate, level_of=level), voicing.book_rate
    pcm = (np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
    duration = len(samples) / rate
    objects.put_bytes(chunk_audio_key(job_id, index, attempt), pcm, content_type="audio/L16")
    meta: ChunkMeta = {"sample_rate": rate, "samples": len(samples), "duration_s": duration, "words": words, "text": text}
    if voicing is not None:
        meta |= {"voice": voicing.voice, "speaker": voicing.speaker}
    if runs:
        meta["sources"] = runs
    if origins is not None:
        meta["origins"] = origins
    objects.put_bytes(chunk_meta_key(job_id, index, attempt), json.dumps(meta).encode(), content_type="application/json")
    if keep_as is not None:
        chunk_cache.keep(objects, keep_as[0], keep_as[1], pcm, meta)
    return duration


def _louder(piece: AudioChunk, gain_db: float) -> AudioChunk:
    if not gain_db:
        return piece
    return replace(piece, samples=(piece.samples * np.float32(10 ** (gain_db / 20))).clip(-1.0, 1.0))


def job_lexicons(sessions: SessionFactory, account_id: uuid.UUID, params: JobParams) -> list[PronunciationLexicon]:
    """The lexicons a job recorded at submission, at the versions it recorded: a rerun or a
    redelivered task reads the book exactly as the first run did, whatever was PUT since."""
    pinned = params.lexicons or []
    if not pinned:
        return []
    with sessions() as session:
        used = for_request(
            session=session, account_id=account_id, names=[p["name"] for p in pinned],
            versions={p["name"]: p["version"] for p in pinned if "version" in p}, limits=LexiconLimits(per_request=len(pinned)),
        )
    return [u.lexicon for u in used]


@dataclass(frozen=True, slots=True)
class Rendered:
    index: int
    text: str
    pieces: list[AudioChunk]
    gains_db: list[float]  # an SSML job's volume of each piece (books.job_ssml); else empty


def chunk_units(text: str, steps: list[Step] | None, lang: str, normalize_text: bool, lexicons: list[PronunciationLexicon]) -> list[StreamStep]:
    """A chunk's units: its text's, or for an SSML job its steps' (rate, volume, language, marks)."""
    if steps is None:
        return steps_for_request(text, lang, lexicons=lexicons, normalize_text=normalize_text).units
    return plan_segments(segments_of(steps), lang, lexicons=lexicons, normalize_text=normalize_text)


def _plain(unit: StreamStep) -> bool:
    """A unit the batched call can speak: text in the chunk's voice, language and speed."""
    return bool(unit.text) and not (unit.phonemes or unit.mark or unit.pause_ms or unit.rate or unit.lang or unit.speed)


def render_units(
    synthesizer: BatchSynthesizer, voice: Voice, controls: Controls, per_chunk: list[list[StreamStep]]
) -> list[tuple[list[AudioChunk], list[float]]]:
    """Each chunk's audio pieces, one per unit, and each piece's gain. The plain units of every
    chunk go to the engine in one batched call; the others (phonemes, a rate, a language, a mark)
    are rendered one by one between them, their volume left for ``store_chunk`` to apply."""
    flat = [u.text for units in per_chunk for u in units if _plain(u)]
    audio = iter(synthesizer.synthesize(voice, flat, controls) if flat else [])
    out: list[tuple[list[AudioChunk], list[float]]] = []
    for units in per_chunk:
        pieces = [next(audio) if _plain(u) else synthesizer.render(voice, replace(u, gain_db=0.0), controls) for u in units]
        out.append((pieces, [u.gain_db for u in units]))
    return out


def _render_group(
    synthesizer: BatchSynthesizer, voice: Voice, controls: Controls, group: list[tuple[int, str]],
    planned: Mapping[int, list[StreamStep]],
) -> list[Rendered]:
    """Each chunk's audio pieces, one per unit, located in the job's text (word offsets)."""
    per_chunk = [planned[index] for index, _ in group]
    rendered = render_units(synthesizer, voice, controls, per_chunk)
    return [
        Rendered(index, text, [located(p, u) for p, u in zip(pieces, units, strict=True)], gains if any(gains) else [])
        for (index, text), units, (pieces, gains) in zip(group, per_chunk, rendered, strict=True)
    ]


def synthesize_batch(
    *,
    sessions: SessionFactory,
    objects: ObjectStore,
    synthesizer: BatchSynthesizer,
    catalog: VoiceCatalog,
    job_id: uuid.UUID,
    indices: list[int],
    group_chars: int,
    on_stored: Callable[[], None] | None = None,
    ending: Callable[[Session], None] | None = None,
) -> BatchResult:
    """``ending(session)`` runs once, in the batch's last transaction, whatever the outcome (the
    lifecycle hands on the account's next batch there). The batch's chunks are marked done and
    billed in that same transaction: one commit for its chunk rows, usage rows and hand-out. With
    ``on_stored`` (the live playlist) each engine call's chunks are committed as they are stored
    instead, and ``on_stored()`` is called after each such commit, so the playlist's maker can
    follow a batch group by group. Either way a crash before a commit leaves its chunks pending
    and unbilled, and the redelivered task does them again."""
    end = ending or _nothing
    with sessions() as session:
        job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        if job.is_terminal:
            end(session)
            return BatchResult(0, False, canceled=job.status == JobStatus.CANCELED)
        params = JobParams.from_stored(job.params)
        account_id = job.account_id
        wanted = set(indices)
        pending = [c for c in job_repo.pending_chunks(session=session, job_id=job_id) if c.index in wanted]
        todo = [(c.index, c.text) for c in pending]
        billed_per_chunk = {c.index: c.characters for c in pending}  # set at planning (speech.billing)
    voice = catalog.resolve(params.model_id, params.speaker, params.lang)
    cast = Cast.from_params(params)
    plan = Layout.from_json(objects.get_bytes(plan_key(job_id)))
    layout = plan if cast is not None or params.ssml else None
    narrator = voice if cast is None else catalog.resolve(params.model_id, cast.narrator, params.lang)
    book_rate = synthesizer.engine(narrator).sample_rate  # a cast's voices all come to the narrator's rate
    controls = Controls(
        time_scale=params.time_scale or 1.0,
        speed=params.speed_alpha,  # stored as a rate (facade.vendor_controls)
    )
    lang = params.lang
    lexicons = job_lexicons(sessions, account_id, params)
    steps = plan.steps if params.ssml else []  # an SSML job's stretches of each chunk (books.job_ssml)
    units = {i: chunk_units(text, steps[i] if steps else None, lang, params.normalize, lexicons) for i, text in todo}
    speakers = {i: _speaking(catalog, params, voice, layout, i) for i, _ in todo}
    keys = {
        i: chunk_cache.content_key(
            speakers[i], units[i], controls, lang=lang, stored_rate=book_rate, sentence_gap_ms=SENTENCE_GAP_MS,
            numerics=numerics_of(synthesizer.engine(speakers[i])),
        )
        for i, _ in todo
    }
    # What the account has rendered before is copied, not synthesized, and not billed again.
    attempt = new_attempt()
    reused = set(chunk_cache.reuse(
        sessions=sessions, objects=objects, account_id=account_id, job_id=job_id, attempt=attempt,
        wanted=[
            chunk_cache.Wanted(i, text, keys[i], _label(layout, i), plan.sources[i] if i < len(plan.sources) else None,
                               origin_key(steps[i]) if steps else None)
            for i, text in todo
        ],
    ))
    todo = [item for item in todo if item[0] not in reused]
    produced, billed = len(reused), 0
    if reused and on_stored is not None:
        on_stored()  # reused chunks are done too: the live playlist can follow them
    groups = _voiced_groups(todo, group_chars, layout)
    held: list[tuple[int, str, float]] = []  # stored, not yet marked: (index, text, seconds)
    bill = ChunkRecord(job_id, account_id, params, attempt, keys, billed_per_chunk)
    for number, (group_voice, group) in enumerate(groups):
        speaking = voice if group_voice is None else catalog.resolve(params.model_id, group_voice, params.lang)
        work = _render_group(synthesizer, speaking, controls, group, units)
        rate = next((p.sample_rate for w in work for p in w.pieces if len(p.samples)), synthesizer.engine(speaking).sample_rate)
        # Look again before writing, in one transaction: a canceled job stops within one group's
        # compute, and a chunk another host stored and marked meanwhile (this task was
        # redelivered while its host was frozen, and the host has woken up) needs nothing more.
        # This only saves the writes: one that comes late anyway (the host froze between this
        # look and its PUT) lands under this attempt's keys, which no row names.
        with sessions() as session:
            running = job_repo.get_job(session=session, job_id=job_id, account_id=None).status == JobStatus.RUNNING
            pending_now = job_repo.still_pending(session=session, job_id=job_id, indices=[w.index for w in work])
            if not running:
                end(session)
        if not running:
            return BatchResult(produced, False, canceled=True, billed=billed, model=params.model_id, reused=len(reused))
        work = [w for w in work if w.index in pending_now]
        voicings: list[Voicing | None] = [  # after the look: one for each chunk still to write
            None if layout is None or not layout.voices else Voicing(layout.voices[w.index], layout.speakers[w.index], book_rate)
            for w in work
        ]
        # The writes are latency (an S3 PUT, a local fsync), so the group's go out together.
        with ThreadPoolExecutor(max_workers=STORE_THREADS, thread_name_prefix="store-chunk") as pool:
            durations = list(
                pool.map(
                    store_chunk, repeat(objects), repeat(job_id), [w.index for w in work], [w.text for w in work],
                    [w.pieces for w in work], repeat(rate), repeat(attempt), voicings, [w.gains_db for w in work],
                    [plan.sources[w.index] if w.index < len(plan.sources) else None for w in work],
                    [(account_id, keys[w.index]) for w in work],
                    [origin_key(steps[w.index]) if steps else None for w in work],
                )
            )
        held += [(w.index, w.text, d) for w, d in zip(work, durations, strict=True)]
        last = number == len(groups) - 1
        if not last and (on_stored is None or not held):
            continue  # marked with a later group's (the batch's last transaction)
        # Marked done and billed together, in a fixed few statements (a GPU group holds ~40 chunks).
        with sessions() as session:
            marked = bill.record(session, held)
            if last:
                complete = _complete(session, job_id)
                end(session)
        held = []
        produced += len(marked)
        billed += sum(billed_per_chunk[i] for i in marked)
        if marked and on_stored is not None:
            on_stored()
    if not groups:  # nothing to render (done, or reused): the batch's last transaction is this one
        with sessions() as session:
            complete = _complete(session, job_id)
            end(session)
    return BatchResult(
        produced, complete, billed=billed, model=params.model_id,
        chapter_scope=params.chapter_scope, qa=params.qa, reused=len(reused),
    )


def _nothing(session: Session) -> None:
    return None


def _complete(session: Session, job_id: uuid.UUID) -> bool:
    """Every chunk of the running job is done: time to assemble."""
    job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
    return job.chunks_total > 0 and job.chunks_done >= job.chunks_total and job.status == JobStatus.RUNNING


def _speaking(catalog: VoiceCatalog, params: JobParams, voice: Voice, layout: Layout | None, index: int) -> Voice:
    """The voice that reads chunk ``index``: the job's, or in a cast the chunk's."""
    return voice if layout is None else catalog.resolve(params.model_id, layout.voices[index], params.lang)


def _label(layout: Layout | None, index: int) -> ChunkVoice | None:
    return None if layout is None else {"voice": layout.voices[index], "speaker": layout.speakers[index]}
