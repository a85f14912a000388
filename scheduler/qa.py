"""The speech-recognition check of a book (``"qa": true``): every chunk heard, scored, rendered
again once when it fails, and what still fails reported with where it is in the book.

The steps, each an idempotent task (``scheduler.lifecycle`` decides which follows):

1. ``check_chunks`` (queue ``cpu``, after each synthesize batch): each chunk's stored audio is
   transcribed (``speech.asr``) and scored against its own text. A pass is final; a failure on the
   first look asks for a second rendering.
2. ``redo_chunks`` (queue ``synth``, where the engine is): the failed chunks are synthesized again
   with another strategy, sentence by sentence and 10% slower (a batch's padding, a long
   sentence's attention, a rushed word are the usual culprits), over the same keys. Not billed:
   the customer pays for the book once.
3. ``check_chunks`` again (``attempt=2``): the verdict is final either way.
4. ``finish``: once every chunk is done and has a final verdict, the report is written
   (``qa_report_key``) and the job goes on to assembly. Its passages carry the chapter and the
   time offset in the book, computed from the plan's pauses and the chunks' lengths, the same
   timeline assembly uses (``books.timeline``).

Verdicts live in the object store, one per chunk under a deterministic key, so a repeated task
finds what was already heard and hears only the rest. While the check runs, chapter-scope jobs do
not assemble ahead: a chunk rendered again would change what was already measured.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from books.casting import Cast
from books.chunks import ChunkKeys, chunk_audio_key
from books.layout import Layout
from books.timeline import Timeline
from scheduler import delivery
from scheduler.job_params import JobParams
from scheduler.objects import plan_key, qa_chunk_key, qa_chunk_prefix, qa_report_key
from scheduler.synthesis import SENTENCE_GAP_MS, Voicing, chunk_units, new_attempt, render_units, store_chunk
from speech.asr import Recognizer, listen, threshold
from speech.stream_steps import located
from speech.synthesizer import BatchSynthesizer, Controls, prepare
from speech.voices.catalog import VoiceCatalog
from store.db import jobs as job_repo
from store.db.models import Job
from store.db.session import SessionFactory
from store.objects.base import ObjectStore
from store.status import JobStatus

REDO_SLOWER: Final = 1.1  # the second rendering's time scale, on top of the job's own

QaReport = delivery.QaReport


@dataclass(frozen=True, slots=True)
class CheckResult:
    heard: int  # chunks transcribed by this call
    redo: list[int]  # chunks to render again
    canceled: bool = False


def _job(sessions: SessionFactory, job_id: uuid.UUID) -> Job:
    with sessions() as session:
        job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        session.expunge(job)
        return job


def _verdict(objects: ObjectStore, job_id: uuid.UUID, index: int) -> dict[str, Any] | None:
    key = qa_chunk_key(job_id, index)
    if not objects.exists(key):
        return None
    found: dict[str, Any] = json.loads(objects.get_bytes(key))
    return found


def _keys(sessions: SessionFactory, job_id: uuid.UUID) -> ChunkKeys:
    """Where the job's chunks are: the keys their rows recorded (``scheduler.objects``)."""
    with sessions() as session:
        return ChunkKeys(job_id, tuple(job_repo.chunk_audio_keys(session=session, job_id=job_id)))


def spoken_sentences(text: str, lang: str, *, normalize: bool = True) -> int:
    """How many sentences a plain-text chunk is spoken as: each one its own stretch of sound
    between the gaps ``join_sentences`` puts (``speech.asr.listen`` counts them)."""
    return sum(1 for sentence in prepare(text, lang, normalize_text=normalize) if any(c.isalnum() for c in sentence))


def _hear(objects: ObjectStore, recognizer: Recognizer, keys: ChunkKeys, index: int, params: JobParams) -> dict[str, Any]:
    """One look at a chunk (``speech.asr.listen``: whole, then sentence by sentence, then another
    model's reading, each only if the one before failed; a sentence without its own stretch of
    sound fails it). An SSML chunk's sentences are its steps (marks, breaks, voices), not counted."""
    meta = json.loads(objects.get_bytes(keys.meta_key(index)))
    pcm = np.frombuffer(objects.get_bytes(keys.audio_key(index)), dtype="<i2")
    rate, text = int(meta["sample_rate"]), meta.get("text", "")
    lang = params.lang or "en"
    samples = pcm.astype(np.float32) * np.float32(1.0 / 32767.0)
    started = time.process_time()
    sentences = None if params.ssml else spoken_sentences(text, lang, normalize=params.normalize)
    hearing = listen(recognizer, samples, rate, text, lang, gap_s=SENTENCE_GAP_MS / 1000, sentences=sentences)
    cpu_s = time.process_time() - started
    result = hearing.score
    return {
        "index": index,
        "text": text,
        "heard": hearing.heard,
        "metric": result.metric,
        "score": round(result.rate, 4),
        "missingRun": result.missing_run,
        "referenceTokens": result.reference_tokens,
        "passed": hearing.passed,
        "heardBySentence": hearing.by_sentence,
        "secondOpinion": hearing.second_opinion,
        "missingSentences": hearing.missing_sentences,
        "audioSeconds": len(pcm) / rate,
        "asrCpuSeconds": round(cpu_s, 3),
    }


def check_chunks(
    *, sessions: SessionFactory, objects: ObjectStore, recognizer: Recognizer, job_id: uuid.UUID, indices: list[int], attempt: int
) -> CheckResult:
    """Hear ``indices`` (done chunks); the first look asks for a redo of what fails, the second is
    final. A chunk already judged at this attempt is not heard again."""
    job = _job(sessions, job_id)
    if job.status != JobStatus.RUNNING:
        return CheckResult(0, [], canceled=job.status == JobStatus.CANCELED)
    params = JobParams.from_stored(job.params)
    keys = _keys(sessions, job_id)
    heard, redo = 0, []
    for index in indices:
        earlier = _verdict(objects, job_id, index)
        if earlier is not None and (earlier["final"] or earlier["attempt"] >= attempt):
            if not earlier["final"]:
                redo.append(index)  # judged, but its redo was lost (a resumed job): ask again
            continue
        verdict = _hear(objects, recognizer, keys, index, params)
        heard += 1
        verdict["attempt"] = attempt
        verdict["final"] = verdict["passed"] or attempt >= 2
        if attempt >= 2:
            verdict["resynthesized"] = True
            if earlier is not None:
                verdict["firstScore"] = earlier["score"]
                verdict["asrCpuSeconds"] = round(verdict["asrCpuSeconds"] + earlier.get("asrCpuSeconds", 0.0), 3)
        if not verdict["final"]:
            redo.append(index)
        objects.put_bytes(qa_chunk_key(job_id, index), json.dumps(verdict).encode(), content_type="application/json")
    return CheckResult(heard, redo)


def redo_chunks(
    *, sessions: SessionFactory, objects: ObjectStore, synthesizer: BatchSynthesizer, catalog: VoiceCatalog, job_id: uuid.UUID, indices: list[int]
) -> list[int]:
    """Render the failed chunks again, sentence by sentence and slower, under keys of their own
    (the row takes the new key with the new length); not billed. Returns the chunks rendered (those a first look failed and still waiting)."""
    job = _job(sessions, job_id)
    if job.status != JobStatus.RUNNING:
        return []
    params = JobParams.from_stored(job.params)
    voice = catalog.resolve(params.model_id, params.speaker, params.lang)
    controls = Controls(
        time_scale=(params.time_scale or 1.0) * REDO_SLOWER,
        speed=params.speed_alpha,  # stored as a rate (facade.vendor_controls)
    )
    # A cast book's chunk is read again by its own voice, brought to the book's rate as before.
    cast = Cast.from_params(params)
    layout = Layout.from_json(objects.get_bytes(plan_key(job_id))) if cast is not None or params.ssml else None
    narrator = voice if cast is None else catalog.resolve(params.model_id, cast.narrator, params.lang)
    book_rate = 0 if layout is None else synthesizer.engine(narrator).sample_rate
    done: list[int] = []
    keys = _keys(sessions, job_id)
    attempt = new_attempt()
    for index in indices:
        verdict = _verdict(objects, job_id, index)
        if verdict is None or verdict["final"]:
            continue
        meta = json.loads(objects.get_bytes(keys.meta_key(index)))
        text = meta.get("text", "")
        speaking = voice if layout is None else catalog.resolve(params.model_id, layout.voices[index], params.lang)
        gains: list[float] = []
        if layout is not None and layout.steps:  # an SSML job's chunk: its steps again (books.job_ssml)
            units = chunk_units(text, layout.steps[index], params.lang, params.normalize, [])
            pieces, gains = render_units(synthesizer, speaking, controls, [units])[0]
            pieces = [located(p, u) for p, u in zip(pieces, units, strict=True)]  # its words' offsets again
        else:
            sentences = prepare(text, params.lang, normalize_text=params.normalize)
            pieces = [piece for sentence in sentences for piece in synthesizer.synthesize(speaking, [sentence], controls)]
        sounding = [p for p in pieces if len(p.samples)]
        if not sounding:
            continue
        voicing = None if layout is None else Voicing(layout.voices[index], layout.speakers[index], book_rate)
        runs = [(int(a), int(b)) for a, b in meta.get("sources", [])] or None
        duration = store_chunk(objects, job_id, index, text, pieces, sounding[0].sample_rate, attempt, voicing, gains,
                               runs, origins=meta.get("origins"))
        with sessions() as session:
            if not job_repo.set_chunk_duration(session=session, job_id=job_id, index=index, duration_s=duration,
                                               audio_key=chunk_audio_key(job_id, index, attempt)):
                return done  # the job ended meanwhile
        done.append(index)
    return done


def finish(*, sessions: SessionFactory, objects: ObjectStore, job_id: uuid.UUID) -> bool:
    """Write the report once every chunk is done and judged; True when the job may be assembled
    (a twin call may also say so: assembly is idempotent)."""
    job = _job(sessions, job_id)
    if job.status != JobStatus.RUNNING or job.chunks_total == 0 or job.chunks_done < job.chunks_total:
        return False
    verdicts = [json.loads(objects.get_bytes(key)) for key in sorted(objects.iter_keys(qa_chunk_prefix(job_id)))]
    if len(verdicts) < job.chunks_total or not all(v["final"] for v in verdicts):
        return False
    with sessions() as session:
        durations = job_repo.chunk_durations(session=session, job_id=job_id)
    report = _build_report(objects, job_id, JobParams.from_stored(job.params), verdicts, durations, _keys(sessions, job_id))
    objects.put_bytes(qa_report_key(job_id), json.dumps(report).encode(), content_type="application/json")
    return True


def _build_report(
    objects: ObjectStore, job_id: uuid.UUID, params: JobParams, verdicts: list[dict[str, Any]],
    durations: list[float | None], keys: ChunkKeys,
) -> QaReport:
    """The customer's report: totals, and each passage that failed after its second rendering
    with its chapter, its offset in the book and in the chapter, its text, what was heard and
    its score."""
    lang = params.lang or "en"
    layout = Layout.from_json(objects.get_bytes(plan_key(job_id)))
    rate = int(json.loads(objects.get_bytes(keys.meta_key(0)))["sample_rate"])
    timeline = Timeline.build(rate, layout.pauses_ms, [int(round((d or 0.0) * rate)) for d in durations])
    marks = sorted(layout.chapters, key=lambda mark: mark.chunk)
    passages = []
    for verdict in sorted(verdicts, key=lambda v: v["index"]):
        if verdict["passed"]:
            continue
        index = int(verdict["index"])
        offset = timeline.offsets[index] / rate
        chapter = next((m for m in reversed(marks) if m.chunk <= index), None)
        chapter_start = 0.0
        if chapter is not None and chapter.chunk > 0:
            chapter_start = (timeline.offsets[chapter.chunk] - timeline.pauses[chapter.chunk]) / rate
        passages.append({
            "chapter": chapter.title if chapter is not None else None,
            "offsetSeconds": round(offset, 2),
            "chapterOffsetSeconds": round(offset - chapter_start, 2),
            "durationSeconds": round(timeline.length(index) / rate, 2),
            "chunk": index,
            "text": verdict["text"],
            "heard": verdict["heard"],
            "metric": verdict["metric"],
            "score": verdict["score"],
            "missingWords" if lang != "ja" else "missingCharacters": verdict["missingRun"],
        })
    limit = threshold(lang)
    return {
        "checked": len(verdicts),
        "resynthesized": sum(1 for v in verdicts if v.get("resynthesized")),
        "flagged": len(passages),
        "metric": "wer" if lang == "en" else "cer",
        "threshold": {"score": limit.rate, "missingRun": limit.missing_run},
        "model": "whisper-tiny.en" if lang == "en" else "whisper-base",
        "audioSeconds": round(sum(v["audioSeconds"] for v in verdicts), 2),
        "asrCpuSeconds": round(sum(v["asrCpuSeconds"] for v in verdicts), 2),
        "passages": passages,
    }


def report(objects: ObjectStore, job: Job) -> QaReport | None:
    """A job's QA report for the API and the webhook: None for a job that did not ask for the
    check, ``{"status": "pending"}`` until it is written."""
    if not JobParams.from_stored(job.params).qa:
        return None
    key = qa_report_key(job.id)
    if not objects.exists(key):
        return {"status": "pending"}
    found: QaReport = json.loads(objects.get_bytes(key))
    return {"status": "done", **found}
