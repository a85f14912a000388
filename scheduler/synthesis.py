"""Synthesizing one batch of a job's chunks.

Each chunk's audio (int16 PCM at the voice's native rate) and its word timings are written under
deterministic keys *before* the chunk is marked done, and the usage row is written in the same
transaction as the mark (one transaction per engine call's group of chunks): a worker killed
anywhere in between leaves those chunks pending and unbilled, and the redelivered task redoes
exactly them. A chunk already done is skipped.
"""

from __future__ import annotations

import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np

from scheduler.objects import chunk_audio_key, chunk_meta_key
from speech.synthesizer import Controls, Synthesizer, prepare
from speech.types import AudioChunk
from store.db import jobs as job_repo
from store.db import usage as usage_repo
from store.db.session import SessionFactory

SENTENCE_GAP_MS = 250
STORE_THREADS = 8


@dataclass(frozen=True, slots=True)
class BatchResult:
    synthesized: int  # chunks this run produced
    complete: bool  # every chunk of the job is done: time to assemble
    canceled: bool = False
    billed: int = 0  # characters those chunks billed (their usage rows)
    model: str = ""  # the job's model, what they were billed under
    chapter_scope: bool = False  # the job's loudness is per chapter: assembly can follow (scheduler.ahead)
    qa: bool = False  # the job asked for the speech-recognition check (scheduler.qa) before assembly


def join_sentences(chunks: list[AudioChunk], sample_rate: int, gap_ms: int = SENTENCE_GAP_MS) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """One chunk's sentences back to back with a short gap; word times shifted to the chunk start."""
    gap = np.zeros(int(sample_rate * gap_ms / 1000), dtype=np.float32)
    parts: list[np.ndarray] = []
    words: list[dict[str, Any]] = []
    offset = 0
    for i, piece in enumerate(chunks):
        if i:
            parts.append(gap)
            offset += len(gap)
        start_s = offset / sample_rate
        words.extend({"word": w.word, "start": start_s + w.start, "end": start_s + w.end} for w in piece.words)
        parts.append(piece.samples.astype(np.float32))
        offset += len(piece.samples)
    samples = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    return samples, words


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


def _status(sessions: SessionFactory, job_id: uuid.UUID) -> str:
    with sessions() as session:
        return job_repo.get_job(session=session, job_id=job_id, account_id=None).status


def store_chunk(objects: Any, job_id: uuid.UUID, index: int, text: str, pieces: list[AudioChunk], rate: int) -> float:
    """Audio and timings go to the store before the chunk is marked done (a crash between leaves
    it pending, and the redo overwrites the same keys)."""
    samples, words = join_sentences(pieces, rate)
    pcm = (np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
    duration = len(samples) / rate
    objects.put_bytes(chunk_audio_key(job_id, index), pcm, content_type="audio/L16")
    meta = {"sample_rate": rate, "samples": len(samples), "duration_s": duration, "words": words, "text": text}
    objects.put_bytes(chunk_meta_key(job_id, index), json.dumps(meta).encode(), content_type="application/json")
    return duration


def synthesize_batch(
    *,
    sessions: SessionFactory,
    objects: Any,
    synthesizer: Synthesizer,
    catalog: Any,
    job_id: uuid.UUID,
    indices: list[int],
    group_chars: int,
) -> BatchResult:
    with sessions() as session:
        job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        if job.status == "canceled" or job.is_terminal:
            return BatchResult(0, False, canceled=job.status == "canceled")
        params = dict(job.params)
        account_id = job.account_id
        wanted = set(indices)
        pending = [c for c in job_repo.pending_chunks(session=session, job_id=job_id) if c.index in wanted]
        todo = [(c.index, c.text) for c in pending]
        billed_per_chunk = {c.index: c.characters for c in pending}  # set at planning (speech.billing)
    voice = catalog.resolve(params["model_id"], params["speaker"], params["lang"])
    controls = Controls(
        time_scale=params.get("time_scale") or 1.0,
        speed_alpha=params.get("speed_alpha"),
        model_id=params["model_id"],
    )
    lang = params["lang"]
    normalize_text = params.get("normalize", True)
    produced = billed = 0
    for group in _groups(todo, group_chars):
        # Between groups, look again: a canceled job stops within one group's compute.
        if produced and _status(sessions, job_id) != "running":
            return BatchResult(produced, False, canceled=True, billed=billed, model=params["model_id"])
        per_chunk = [prepare(text, lang, normalize_text=normalize_text) for _, text in group]
        flat = [s for sentences in per_chunk for s in sentences]
        audio = synthesizer.synthesize(voice, flat, controls) if flat else []
        rate = audio[0].sample_rate if audio else synthesizer.engine(voice).sample_rate
        cursor = 0
        work: list[tuple[int, str, list[AudioChunk]]] = []
        for (index, text), sentences in zip(group, per_chunk, strict=True):
            work.append((index, text, audio[cursor : cursor + len(sentences)]))
            cursor += len(sentences)
        # The writes are latency (an S3 PUT, a local fsync), so the group's go out together.
        with ThreadPoolExecutor(max_workers=STORE_THREADS, thread_name_prefix="store-chunk") as pool:
            durations = list(
                pool.map(
                    store_chunk, repeat(objects), repeat(job_id), [w[0] for w in work], [w[1] for w in work],
                    [w[2] for w in work], repeat(rate),
                )
            )
        stored = [(index, text, d) for (index, text, _), d in zip(work, durations, strict=True)]
        # One transaction for the group: its chunks marked done and billed together, in a fixed
        # few statements (a GPU group holds ~40 chunks).
        with sessions() as session:
            marked = job_repo.mark_chunks_done(
                session=session, job_id=job_id, done=[(i, chunk_audio_key(job_id, i), d) for i, _, d in stored]
            )
            durations_by_index = {i: d for i, _, d in stored}
            usage_repo.record_job_usage(
                session=session, account_id=account_id, job_id=job_id, model=params["model_id"],
                speaker=params["speaker"], lang=lang,
                chunks=[(i, billed_per_chunk[i], durations_by_index[i]) for i in marked],
            )
            produced += len(marked)
            billed += sum(billed_per_chunk[i] for i in marked)
    with sessions() as session:
        job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        complete = job.chunks_total > 0 and job.chunks_done >= job.chunks_total and job.status == "running"
    return BatchResult(
        produced, complete, billed=billed, model=params["model_id"],
        chapter_scope=params.get("loudness_scope") == "chapter", qa=bool(params.get("qa")),
    )
