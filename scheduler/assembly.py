"""Assembling a finished job: stitch chunks in order, one loudness gain, encode, upload.

Guarded by the job's status (``running`` -> ``assembling`` -> ``succeeded``): two assemble tasks
for one job (two batches finishing at once, or a redelivery) do the work at most once to
completion, and a repeat after a crash mid-assembly simply redoes it under the same keys.

Memory stays bounded by one chunk, whatever the length of the book, in two streaming passes:

1. Measure. Chunks are read in order with the pause before each and their edges faded; a
   :class:`LoudnessMeter` takes them block by block (BS.1770 with carried filter state, so the
   result equals measuring the whole), and each chunk's sample peak, offset, word and sentence
   timings and chapter starts are noted. Timestamps and subtitles are written to files as they go.
2. Render (``scheduler.rendering``). The same chunks again, resampled, multiplied by the one
   gain, true-peak limited around the samples that come near the ceiling, and encoded into a file
   on local disk; MP3 in segments on every core, other formats with the encoder on its own thread.

The result then goes up with a multipart upload. Chunks are fetched a few ahead on a small
thread pool so object-store latency overlaps with the arithmetic.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TextIO

import numpy as np
from sqlalchemy.orm import Session

from scheduler import subtitles
from scheduler.encoding import open_file_encoder
from scheduler.intake import FORMATS
from scheduler.objects import (
    plan_key,
    result_key,
    srt_key,
    timestamps_key,
    vtt_key,
)
from scheduler.planning import Layout
from scheduler.rendering import Book, faded, fetch_chunks, render_audio
from speech.audio import Chapter, LoudnessMeter, Metadata, normalization_gain_db
from store.db import jobs as job_repo

SessionFactory = Callable[[], AbstractContextManager[Session]]
DEFAULT_RATE: Final = 24000
TARGET_LUFS: Final = -19.0


@dataclass(slots=True)
class _Measure:
    """What pass 1 learns and pass 2 needs: a few numbers per chunk, never the audio."""

    native_rate: int = 0
    pauses: list[int] = field(default_factory=list)  # silence before each chunk, native samples
    peaks: list[float] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)  # chunk start (after its pause), native samples
    end: int = 0  # total native samples
    loudness: float = float("-inf")


@dataclass(frozen=True, slots=True)
class Rendered:
    audio: Path
    timestamps: Path
    srt: Path
    vtt: Path
    duration_s: float
    chapters: list[Chapter]


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

    def add(self, text: str, words: list[dict[str, Any]], shift: float, lang: str, normalize_text: bool) -> None:
        shifted = [
            {"word": w["word"], "start": round(shift + w["start"], 3), "end": round(shift + w["end"], 3)} for w in words
        ]
        for word in shifted:
            self._words.write(("" if self._first_word else ",") + json.dumps(word, ensure_ascii=False))
            self._first_word = False
        for sentence in subtitles.timed_sentences(text, shifted, lang, normalize_text=normalize_text):
            entry = {"text": sentence.text, "start": sentence.start, "end": sentence.end}
            self._sentences.write(("" if self._first_sentence else ",") + json.dumps(entry, ensure_ascii=False))
            self._first_sentence = False
            for cue in subtitles.cues(sentence):
                self._cue_number += 1
                self._srt.write(subtitles.srt_block(self._cue_number, cue))
                self._vtt.write(subtitles.vtt_block(cue))

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


def _measure(objects: Any, job_id: uuid.UUID, layout: Layout, timing: _TimingWriter, params: dict[str, Any]) -> _Measure:
    m = _Measure()
    meter: LoudnessMeter | None = None
    lang = params.get("lang") or "en"
    normalize_text = params.get("normalize", True)
    position = 0
    for index, (pcm, meta) in enumerate(fetch_chunks(objects, job_id, 0, len(layout.pauses_ms))):
        rate = int(meta["sample_rate"])
        if meter is None:
            m.native_rate, meter = rate, LoudnessMeter(rate)
        elif rate != m.native_rate:
            raise ValueError(f"chunk {index} is at {rate} Hz, the job's first chunk at {m.native_rate} Hz")
        pause = int(round(layout.pauses_ms[index] * rate / 1000))
        m.pauses.append(pause)
        samples = faded(pcm, rate)
        if pause:
            meter.add(np.zeros(pause, dtype=np.float32))
        meter.add(samples)
        position += pause
        m.offsets.append(position)
        m.peaks.append(float(np.max(np.abs(samples))) if len(samples) else 0.0)
        timing.add(meta.get("text", ""), meta.get("words", []), position / rate, lang, normalize_text)
        position += len(samples)
    m.end = position
    m.loudness = meter.integrated_loudness() if meter is not None else float("-inf")
    return m


def chapter_marks(layout: Layout, m: _Measure) -> list[Chapter]:
    """A chapter starts where the pause before its first chunk starts (offset 0 for the first)."""
    if not m.native_rate:
        return []
    starts = []
    for mark in layout.chapters:
        index = mark.chunk
        start = 0 if index == 0 else m.offsets[index] - int(round(layout.pauses_ms[index] * m.native_rate / 1000))
        starts.append((mark.title, start / m.native_rate))
    total = m.end / m.native_rate
    return [
        Chapter(title, start, starts[i + 1][1] if i + 1 < len(starts) else total)
        for i, (title, start) in enumerate(starts)
    ]


def render(
    objects: Any, job_id: uuid.UUID, params: dict[str, Any], workdir: Path, *, threads: int | None = None
) -> Rendered:
    """Both passes for a job whose chunks are all in the store; files land in ``workdir``."""
    layout = Layout.from_json(objects.get_bytes(plan_key(job_id)))
    fmt = params.get("format", "wav")
    with ExitStack() as stack:
        timing = _TimingWriter(stack, workdir)
        m = _measure(objects, job_id, layout, timing, params)
        timing.close()
    chapters = chapter_marks(layout, m)
    out_rate = int(params.get("sampling_rate") or DEFAULT_RATE)
    metadata = Metadata(
        title=params.get("title"),
        author=params.get("author"),
        genre="Audiobook",
        chapters=tuple(chapters),
    )
    audio = workdir / f"audio.{fmt}"
    written = 0
    if m.native_rate:
        book = Book(
            native_rate=m.native_rate, pauses=m.pauses, offsets=m.offsets, peaks=m.peaks, end=m.end,
            gain=10 ** (normalization_gain_db(m.loudness, float(params.get("loudness_lufs") or TARGET_LUFS)) / 20),
        )
        written = render_audio(objects, job_id, book, fmt, out_rate, audio, metadata=metadata, threads=threads)
    else:  # nothing to say: a valid, empty file
        open_file_encoder(fmt, out_rate, audio, metadata=metadata).finish()
    return Rendered(
        audio=audio,
        timestamps=timing.timestamps(workdir / "timestamps.json", chapters),
        srt=timing.srt_path,
        vtt=timing.vtt_path,
        duration_s=written / out_rate,
        chapters=chapters,
    )


def assemble_job(*, sessions: SessionFactory, objects: Any, job_id: uuid.UUID, threads: int | None = None) -> bool:
    """Return True when this call moved the job to ``succeeded`` (the caller then sends the webhook)."""
    with sessions() as session:
        moved = job_repo.set_job_status(session=session, job_id=job_id, status="assembling", expected=("running",))
        job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        if not moved and job.status != "assembling":
            return False
        if job.chunks_done < job.chunks_total:
            return False
        params = dict(job.params)

    fmt = params.get("format", "wav")
    key = result_key(job_id, fmt)
    with tempfile.TemporaryDirectory(prefix="lector-assemble-") as tmp:
        rendered = render(objects, job_id, params, Path(tmp), threads=threads)
        objects.put_file(key, rendered.audio, content_type=FORMATS[fmt])
        objects.put_file(timestamps_key(job_id), rendered.timestamps, content_type="application/json")
        objects.put_file(srt_key(job_id), rendered.srt, content_type="application/x-subrip")
        objects.put_file(vtt_key(job_id), rendered.vtt, content_type="text/vtt")
    with sessions() as session:
        return job_repo.set_job_status(
            session=session,
            job_id=job_id,
            status="succeeded",
            expected=("assembling",),
            result_key=key,
            result_content_type=FORMATS[fmt],
            audio_seconds=rendered.duration_s,
        )
