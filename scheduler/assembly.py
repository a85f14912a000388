"""Assembling a finished job: stitch chunks in order, one loudness gain, encode, upload.

Guarded by the job's status (``running`` -> ``assembling`` -> ``succeeded``): two assemble tasks
for one job (two batches finishing at once, or a redelivery) do the work at most once to
completion, and a repeat after a crash mid-assembly simply redoes it under the same keys.

Where every chunk lands on the book's timeline follows from the plan's pauses and the chunks'
lengths (from PostgreSQL, or the chunks' metadata), so the book is cut into segments joined in
long pauses before any audio is read, and both passes run on every core (``books.parallel``),
each worker holding about one chunk:

1. Measure (``books.measuring``). Each part's loudness (BS.1770 energies on a shared 100 ms
   grid, joined exactly) and its chunks' sample peaks. Meanwhile this thread writes the word and
   sentence timings and the subtitles, read from the chunks' metadata.
2. Render (``books.rendering``). The same segments again, resampled, multiplied by the one
   gain, true-peak limited around the samples that come near the ceiling, and encoded into a file
   on local disk: MP3 and m4b segment by segment in parallel, other formats as one stream with
   the encoder on its own thread.

The result then goes up with a multipart upload.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TextIO

from books import acx, conformance, measuring, parallel, subtitles
from books.chunks import ChunkKeys, ChunkVoice, TimedWord
from books.layout import Layout, Pauses
from books.rendering import Measured, encoded_segments, plan_segments, render_audio, uses_segments
from books.timeline import Timeline, fetch_metas, meta_length
from scheduler import progressive_assembly
from scheduler.audiobook import audiobook_tags
from scheduler.intake import FORMATS
from scheduler.job_params import JobParams
from scheduler.objects import compliance_key, plan_key, result_key, srt_key, timestamps_key, vtt_key
from speech.audio import (
    Chapter,
    Metadata,
    joined_loudness,
    measure_file,
    normalization_gain_db,
    open_file_encoder,
)
from speech.audio.m4b import tag_m4b
from speech.text.offsets import Runs
from store.db import jobs as job_repo
from store.db.session import SessionFactory
from store.objects.base import ObjectStore
from store.status import JobStatus

log = logging.getLogger("lector.assembly")
DEFAULT_RATE: Final = 24000
TARGET_LUFS: Final = -19.0
ZIP_CONTENT_TYPE: Final = "application/zip"


@dataclass(frozen=True, slots=True)
class Rendered:
    audio: Path
    timestamps: Path
    srt: Path
    vtt: Path
    duration_s: float
    chapters: list[Chapter]
    paragraph_pauses_s: list[float]  # the middle of every pause at least a paragraph's long (where a file may be cut)


class _TimingWriter:
    """Words, sentences and cues to files as they are found (a novel has ~150,000 words)."""

    def __init__(self, stack: ExitStack, tmp: Path) -> None:
        self.words_path, self.sentences_path = tmp / "words.part", tmp / "sentences.part"
        self.srt_path, self.vtt_path = tmp / "subtitles.srt", tmp / "subtitles.vtt"
        self._words: TextIO = stack.enter_context(open(self.words_path, "w", encoding="utf-8"))
        self._sentences: TextIO = stack.enter_context(open(self.sentences_path, "w", encoding="utf-8"))
        self._srt: TextIO = stack.enter_context(open(self.srt_path, "w", encoding="utf-8"))
        self._vtt: TextIO = stack.enter_context(open(self.vtt_path, "w", encoding="utf-8"))
        self._vtt.write(subtitles.VTT_HEADER)
        self._cue_number = 0
        self._first_word = self._first_sentence = True

    def add(
        self, text: str, words: list[TimedWord], shift: float, lang: str, normalize_text: bool,
        voice: ChunkVoice | None = None, runs: Runs | None = None,
    ) -> None:
        """``voice``: a cast chunk's voice and speaker, named in its sentences and cues."""
        shifted = [subtitles.shifted(w, shift) for w in words]
        for word in shifted:
            self._words.write(("" if self._first_word else ",") + json.dumps(word, ensure_ascii=False))
            self._first_word = False
        spoken = [w for w in shifted if not w.get("mark")]  # an SSML mark is named in the words, not a sentence's
        for sentence in subtitles.timed_sentences(text, spoken, lang, normalize_text=normalize_text, runs=runs):
            entry = {
                "text": sentence.text, "start": sentence.start, "end": sentence.end, **sentence.written_at(), **(voice or {})
            }
            self._sentences.write(("" if self._first_sentence else ",") + json.dumps(entry, ensure_ascii=False))
            self._first_sentence = False
            for cue in subtitles.cues(sentence):
                self._cue_number += 1
                self._srt.write(subtitles.srt_block(self._cue_number, cue))
                self._vtt.write(subtitles.vtt_block(cue, subtitles.voice_label(voice)))

    def close(self) -> None:
        for f in (self._words, self._sentences, self._srt, self._vtt):
            f.close()

    def timestamps(self, path: Path, chapters: list[Chapter]) -> Path:
        marks = [{"title": c.title, "start": round(c.start, 3), "end": round(c.end or 0.0, 3)} for c in chapters]
        with open(path, "w", encoding="utf-8") as out:
            out.write('{"chapters": ' + json.dumps(marks, ensure_ascii=False) + ', "sentences": [')
            with open(self.sentences_path, encoding="utf-8") as part:
                shutil.copyfileobj(part, out)
            out.write('], "words": [')
            with open(self.words_path, encoding="utf-8") as part:
                shutil.copyfileobj(part, out)
            out.write("]}")
        return path


def _timeline(
    objects: ObjectStore, job_id: uuid.UUID, layout: Layout, durations: Sequence[float | None] | None,
    keys: ChunkKeys,
) -> Timeline | None:
    """None for a job with nothing to say. ``durations`` (seconds, from the chunk rows) spare
    reading every chunk's metadata first; ``len / rate`` in a double gives the length back exactly."""
    count = len(layout.pauses_ms)
    if not count:
        return None
    first = json.loads(objects.get_bytes(keys.meta_key(0)))
    rate = int(first["sample_rate"])
    if durations is not None and len(durations) == count and all(d is not None for d in durations):
        lengths = [int(round(float(d) * rate)) for d in durations]  # type: ignore[arg-type]
    else:
        lengths = [meta_length(meta) for meta in fetch_metas(objects, job_id, count, keys)]
    return Timeline.build(rate, layout.pauses_ms, lengths, keys)


def _write_timings(objects: ObjectStore, job_id: uuid.UUID, timeline: Timeline, timing: _TimingWriter, params: JobParams) -> None:
    lang = params.lang or "en"
    normalize_text = params.normalize
    for index, meta in enumerate(fetch_metas(objects, job_id, len(timeline.offsets), timeline.keys)):
        if int(meta["sample_rate"]) != timeline.native_rate:
            raise ValueError(
                f"chunk {index} is at {meta['sample_rate']} Hz, the job's first chunk at {timeline.native_rate} Hz"
            )
        shift = timeline.offsets[index] / timeline.native_rate
        voice: ChunkVoice | None = {"voice": meta["voice"], "speaker": meta.get("speaker")} if "voice" in meta else None
        # An SSML chunk's runs place its words in the markup, not its text's tokens: its sentences
        # and cues take their words' offsets (books.subtitles.words_at).
        runs = [] if params.ssml else [(int(a), int(b)) for a, b in meta.get("sources", [])]
        timing.add(meta.get("text", ""), meta.get("words", []), shift, lang, normalize_text, voice, runs)


def _measure(
    objects: ObjectStore, job_id: uuid.UUID, timeline: Timeline, firsts: list[int], workers: int,
    timing: _TimingWriter, params: JobParams,
) -> tuple[float, list[float]]:
    """Pass 1 on the workers while this thread writes the timings: the book's loudness and each
    chunk's peak."""
    with parallel.executor(workers) as pool:
        futures = [
            pool.submit(measuring.measure_part, objects, job_id, timeline, part)
            for part in measuring.parts(timeline, firsts)
        ]
        try:
            _write_timings(objects, job_id, timeline, timing, params)
            results = [future.result() for future in futures]
        finally:
            for future in futures:
                future.cancel()
    return joined_loudness([r.meter for r in results]), [peak for r in results for peak in r.peaks]


def chapter_marks(layout: Layout, timeline: Timeline | None) -> list[Chapter]:
    """A chapter starts where the pause before its first chunk starts (offset 0 for the first)."""
    if timeline is None:
        return []
    rate = timeline.native_rate
    starts = []
    for mark in layout.chapters:
        index = mark.chunk
        start = 0 if index == 0 else timeline.offsets[index] - timeline.pauses[index]
        starts.append((mark.title, start / rate))
    total = timeline.end / rate
    return [
        Chapter(title, start, starts[i + 1][1] if i + 1 < len(starts) else total)
        for i, (title, start) in enumerate(starts)
    ]


def render(
    objects: ObjectStore, job_id: uuid.UUID, params: JobParams, workdir: Path, *,
    workers: int | None = None, durations: Sequence[float | None] | None = None, keys: ChunkKeys | None = None,
) -> Rendered:
    """Both passes for a job whose chunks are all in the store; files land in ``workdir``.
    ``workers``: segments at a time (default: every core); ``keys``: where the chunks are (the
    rows'; default: the attempt-less keys)."""
    workers = workers or parallel.default_workers()
    layout = Layout.from_json(objects.get_bytes(plan_key(job_id)))
    fmt = params.format
    out_rate = int(params.sampling_rate or DEFAULT_RATE)
    target = float(params.loudness_lufs or TARGET_LUFS)
    timeline = _timeline(objects, job_id, layout, durations, keys or ChunkKeys(job_id))
    chapters = chapter_marks(layout, timeline)
    metadata = Metadata(
        title=params.title, author=params.author, genre="Audiobook", chapters=tuple(chapters)
    )
    audio = workdir / f"audio.{fmt}"
    written = 0
    chapter_scope = params.chapter_scope
    try:
        with ExitStack() as stack:
            timing = _TimingWriter(stack, workdir)
            if timeline is None:  # nothing to say: a valid, empty file
                open_file_encoder(fmt, out_rate, audio, metadata=metadata).finish()
            elif chapter_scope:  # mostly done while synthesis ran
                with ThreadPoolExecutor(max_workers=1, thread_name_prefix="assemble-timings") as pool:
                    timings = pool.submit(_write_timings, objects, job_id, timeline, timing, params)
                    book = progressive_assembly.Book(job_id, layout, timeline, fmt, out_rate, target)
                    written = progressive_assembly.finish(objects, book, audio, metadata=metadata, workers=workers)
                    timings.result()
                _conform(
                    job_id, layout, timeline, lambda: progressive_assembly.levels(objects, book), audio, target,
                    lambda levels: progressive_assembly.render_again(objects, book, levels, audio, metadata=metadata, workers=workers),
                    fmt=fmt, chapter_scope=True,
                )
            else:
                written, levels = _render_book_scope(
                    objects, job_id, timeline, fmt, out_rate, target, audio, metadata, workers, timing, params
                )
                _conform(
                    job_id, layout, timeline, lambda: levels, audio, target,
                    lambda again: render_audio(
                        objects, job_id, again, fmt, out_rate, audio, metadata=metadata, workers=workers
                    ),
                    fmt=fmt, chapter_scope=False,
                )
            timing.close()
    except parallel.BrokenProcessPool:
        parallel.discard(workers)  # a worker process died (OOM?): the retried task gets a new pool
        raise
    return Rendered(
        audio=audio,
        timestamps=timing.timestamps(workdir / "timestamps.json", chapters),
        srt=timing.srt_path,
        vtt=timing.vtt_path,
        duration_s=written / out_rate,
        chapters=chapters,
        paragraph_pauses_s=_paragraph_pauses(timeline, Pauses.from_params(params).paragraph_ms),
    )


def _paragraph_pauses(timeline: Timeline | None, paragraph_ms: int) -> list[float]:
    if timeline is None:
        return []
    rate = timeline.native_rate
    return [
        (offset - pause / 2) / rate
        for offset, pause in zip(timeline.offsets, timeline.pauses, strict=True)
        if pause and pause * 1000 >= paragraph_ms * rate
    ]


def _render_book_scope(
    objects: ObjectStore, job_id: uuid.UUID, timeline: Timeline, fmt: str, out_rate: int, target: float, audio: Path,
    metadata: Metadata, workers: int, timing: _TimingWriter, params: JobParams,
) -> tuple[int, Measured]:
    """One gain for the whole book: measured in parts on the workers, then rendered."""
    if uses_segments(fmt, out_rate, workers):
        segments = encoded_segments(timeline, fmt, out_rate, workers)
    else:
        segments = plan_segments(timeline, out_rate, 2 * workers)  # for measuring only
    log.info(
        "job %s: %d chunks, %.0f s, in %d segments on %d worker %s", job_id, len(timeline.offsets),
        timeline.end / timeline.native_rate, len(segments), workers,
        "processes" if parallel.uses_processes(workers) else "threads",
    )
    loudness, peaks = _measure(objects, job_id, timeline, [s.first for s in segments], workers, timing, params)
    gain_db = normalization_gain_db(loudness, target)
    book = Measured.one_gain(timeline, peaks, 10 ** (gain_db / 20), conformance.limiter_ceiling(fmt))
    return render_audio(objects, job_id, book, fmt, out_rate, audio, metadata=metadata, workers=workers), book


def _conform(
    job_id: uuid.UUID, layout: Layout, timeline: Timeline, rendered_with: Callable[[], Measured], audio: Path, target: float, render_again: Callable[[Measured], int], *, fmt: str, chapter_scope: bool,
) -> None:
    """Decode the file just written and render it again while its loudness or peak misses
    (``books.conformance``); ``rendered_with`` gives the levels the file was rendered with."""
    parts = conformance.spans(layout, timeline, chapter_scope=chapter_scope, chapters=progressive_assembly.chapter_spans(layout))
    corrector = conformance.Corrector(fmt, target, parts)
    levels: Measured | None = None
    tried: list[tuple[Measured | None, conformance.Verdict]] = []  # None: the first render's levels
    for attempt in range(1, conformance.MAX_RENDERS + 1):
        seen = conformance.verdict(measure_file(audio, cuts_s=conformance.cuts_s(parts)), parts)
        log.info(
            "job %s: render %d decodes at %s LUFS (target %.1f), true peak %.2f dBFS", job_id, attempt,
            ", ".join(f"{v:.2f}" for v in seen.loudness), target, seen.true_peak_dbfs,
        )
        if seen.ok(target):
            return
        tried.append((levels, seen))
        if attempt == conformance.MAX_RENDERS:
            break
        levels = corrector.next_levels(levels or rendered_with(), seen)
        render_again(levels)
    best = conformance.best_kept([seen for _, seen in tried], target)
    if best is None:
        render_again(conformance.last_resort([(lv or rendered_with(), seen) for lv, seen in tried], target, parts))
        last = conformance.verdict(measure_file(audio, cuts_s=conformance.cuts_s(parts)), parts)
        log.log(
            logging.INFO if last.keeps_promise(target) else logging.WARNING,
            "job %s: no render of %d kept the target and the ceiling; a last one with a lower ceiling decodes at "
            "%s LUFS, true peak %.2f dBFS", job_id, len(tried), ", ".join(f"{v:.2f}" for v in last.loudness),
            last.true_peak_dbfs,
        )
    elif best != len(tried) - 1:
        log.info("job %s: render %d kept the promise and the last did not: rendering it again", job_id, best + 1)
        render_again(tried[best][0] or rendered_with())


def assemble_job(*, sessions: SessionFactory, objects: ObjectStore, job_id: uuid.UUID, workers: int | None = None) -> bool:
    """Return True when this call moved the job to ``succeeded`` (the caller then sends the webhook).

    The work runs under the job's assembly lock (``jobs.lock_assembly``), taken after the move to
    ``assembling`` (so steps ahead stop at their next look): a twin waits, then finds the job
    succeeded and does nothing; a step ahead still encoding finishes first, and what it stored
    is not encoded again."""
    with sessions() as session:
        moved = job_repo.set_job_status(session=session, job_id=job_id, status=JobStatus.ASSEMBLING)
        job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        if not moved and job.status != JobStatus.ASSEMBLING:
            return False
        if job.chunks_done < job.chunks_total:
            return False
    with sessions() as claim:  # held to the end: a twin, or a step still assembling ahead, goes first
        job_repo.lock_assembly(session=claim, job_id=job_id, wait=True)
        return _assemble_locked(sessions=sessions, objects=objects, job_id=job_id, workers=workers)


def _assemble_locked(*, sessions: SessionFactory, objects: ObjectStore, job_id: uuid.UUID, workers: int | None) -> bool:
    with sessions() as session:
        job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        if job.status != JobStatus.ASSEMBLING:
            return False  # a twin finished it while this one waited (or it was canceled)
        params = JobParams.from_stored(job.params)
        durations = job_repo.chunk_durations(session=session, job_id=job_id)
        keys = ChunkKeys(job_id, tuple(job_repo.chunk_audio_keys(session=session, job_id=job_id)))

    fmt = params.format
    key, content_type = result_key(job_id, fmt), FORMATS[fmt]
    with tempfile.TemporaryDirectory(prefix="lector-assemble-") as tmp:
        rendered = render(objects, job_id, params, Path(tmp), workers=workers, durations=durations, keys=keys)
        if params.delivery == "acx":  # the package is the result; the WAV master stays here
            package = acx.package(
                rendered.audio, rendered.chapters, rendered.paragraph_pauses_s, Path(tmp),
                title=params.title, author=params.author,
            )
            key, content_type = result_key(job_id, "zip"), ZIP_CONTENT_TYPE
            objects.put_file(key, package.zip_path, content_type=content_type)
            objects.put_bytes(compliance_key(job_id), json.dumps(package.report).encode(), content_type="application/json")
        else:
            if fmt == "m4b":  # what marks it an audiobook in a listener's app: narrator, cover, media kind
                tag_m4b(rendered.audio, audiobook_tags(objects, job_id, params))
            objects.put_file(key, rendered.audio, content_type=content_type)
        objects.put_file(timestamps_key(job_id), rendered.timestamps, content_type="application/json")
        objects.put_file(srt_key(job_id), rendered.srt, content_type="application/x-subrip")
        objects.put_file(vtt_key(job_id), rendered.vtt, content_type="text/vtt")
    with sessions() as session:
        return job_repo.set_job_status(
            session=session,
            job_id=job_id,
            status=JobStatus.SUCCEEDED,
            result_key=key,
            result_content_type=content_type,
            audio_seconds=rendered.duration_s,
        )
