"""Planning a job: its text becomes chapters and sentence-aligned chunks, the chunks GPU batches.

Chunks are the unit of storage and billing (one row, one audio object, one usage row each; the
row says what the chunk bills, by ``speech.billing``'s rule);
sentences inside a chunk are the engine's unit. A chunk never spans a chapter (each chapter is
chunked on its own), so a chapter starts exactly at a chunk and its marker and pause need no
sample arithmetic inside a chunk. Batches group chunks of similar length so a padded forward
pass wastes little, and are sized by characters so a task stays short enough to be redelivered
cheaply when its worker dies.

The layout (the pause before each chunk, where chapters start, the batches in dispatch order) is
written next to the chunks as ``plan.json``: assembly reads it instead of re-deriving it, and a
repeated plan writes the same.

Fairness: a job does not put all its batches on the queue at once. Planning sends the first
``window`` batches and every finished batch claims the next one (an atomic counter on the job
row), so a job never has more than about ``window`` batches queued and a small job submitted
behind a novel waits for a few batches, not for the novel.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from typing import Final

from sqlalchemy.orm import Session

from books import credits
from books.casting import SPEAKER_TURN_MS, Cast, turns
from books.chapters import Section, sections_for, spoken
from books.chunk_sources import chunk_runs
from books.job_ssml import Speakers, plan_ssml
from books.layout import ChapterMark, Layout, Pauses
from scheduler.job_params import JobParams
from scheduler.objects import plan_key, source_key
from speech.billing import billed_characters
from speech.text import chunk as chunk_text
from store.db import jobs as job_repo
from store.objects.base import ObjectStore
from store.status import JobStatus

CHUNK_CHARS: Final = 600  # well inside the 1,000-character request limit; small enough to retry cheaply

#: Batches sorted by length together; the stretches they come from are handed out in book order.
#: Two: chunks fill up to ``CHUNK_CHARS`` but for paragraph ends, so a stretch of two batches
#: still groups most lengths, and the done prefix of the book trails synthesis by two batches.
BOOK_ORDER_BATCHES: Final = 2

def split(
    text: str, lang: str, *, sections: list[Section] | None = None, pauses: Pauses | None = None,
    cast: Cast | None = None,
) -> tuple[list[str], Layout]:
    """Chunk texts and their layout. ``sections`` default to the whole text as one, unmarked.
    With a ``cast`` a chunk never spans a change of voice (``books.casting``)."""
    pauses = pauses or Pauses()
    if sections is None:
        sections = [Section("", 0, len(text), is_chapter=False)]
    if cast is not None:
        return _split_cast(text, lang, sections, pauses, cast)
    texts: list[str] = []
    pauses_ms: list[int] = []
    chapters: list[ChapterMark] = []
    for section in sections:
        pieces = chunk_text(spoken(text[section.start : section.end]), lang, limit=CHUNK_CHARS)
        if not pieces:
            continue
        if section.title and (section.is_chapter or len(sections) > 1):
            chapters.append(ChapterMark(section.title, len(texts)))
        for i, piece in enumerate(pieces):
            if not texts:
                pauses_ms.append(0)
            elif i == 0:
                pauses_ms.append(pauses.chapter_ms if len(sections) > 1 else pauses.paragraph_ms)
            else:
                pauses_ms.append(pauses.paragraph_ms if piece.paragraph_break_before else pauses.sentence_ms)
            texts.append(piece.text)
    return texts, Layout(pauses_ms, chapters)


def _split_cast(text: str, lang: str, sections: list[Section], pauses: Pauses, cast: Cast) -> tuple[list[str], Layout]:
    """``split`` for a cast: each section's paragraphs cut into turns, each turn chunked on its own.
    A new paragraph gets the paragraph pause; a voice change inside a sentence ("“Well,” said
    Elizabeth, “...”") a short one, and inside a paragraph after a full stop the sentence pause."""
    texts: list[str] = []
    layout = Layout([], [], [], [], [])
    for section in sections:
        paragraphs = [p for p in _PARAGRAPHS.split(spoken(text[section.start : section.end])) if p.strip()]
        first_of_section = True
        for turn in turns([" ".join(p.split()) for p in paragraphs], cast):
            pieces = chunk_text(turn.text, lang, limit=CHUNK_CHARS)
            for i, piece in enumerate(pieces):
                if first_of_section and section.title and (section.is_chapter or len(sections) > 1):
                    layout.chapters.append(ChapterMark(section.title, len(texts)))
                if not texts:
                    pause = 0
                elif first_of_section:
                    pause = pauses.chapter_ms if len(sections) > 1 else pauses.paragraph_ms
                elif i == 0 and turn.paragraph_start:
                    pause = pauses.paragraph_ms
                elif i == 0:
                    pause = pauses.sentence_ms if _SENTENCE_END.search(texts[-1]) else SPEAKER_TURN_MS
                else:
                    pause = pauses.sentence_ms
                first_of_section = False
                layout.pauses_ms.append(pause)
                layout.voices.append(turn.voice)
                layout.speakers.append(turn.speaker)
                texts.append(piece.text)
    return texts, layout


def split_ssml(document: str, params: JobParams) -> tuple[list[str], Layout]:
    """``split`` for an SSML job: every chunk has a voice (the job's, a ``voice`` switch's or a
    cast character's) and its steps; a ``break`` or a paragraph's end is the pause before a chunk."""
    cast = Cast.from_params(params)
    speakers = Speakers(cast.narrator if cast is not None else params.speaker, cast)
    plan = plan_ssml(document, params.lang or "en", speakers, sentence_ms=Pauses.from_params(params).sentence_ms)
    return plan.texts, Layout(plan.pauses_ms, [], [], plan.voices, plan.speakers, steps=plan.steps)


_PARAGRAPHS: Final = re.compile(r"\n[ \t\r\f\v]*\n")
_SENTENCE_END: Final = re.compile(r"[.!?…][\"”’)]*\s*$")


def batches(
    lengths: dict[int, int], *, budget: int, window: int | None = None, voices: Sequence[str] = ()
) -> list[list[int]]:
    """Group chunk indices of similar length, each group within ``budget`` characters.

    ``window`` (characters): sort by length only within consecutive stretches of the book this
    long, handed out in book order, so that the book is done from its start on while synthesis
    runs and assembly can follow it (``scheduler.progressive_assembly``); a stretch of a few batches still
    groups similar lengths (a padded forward pass wastes little). None: the whole book at once.
    ``voices`` (a cast's voice of each chunk): a batch holds one voice, as one forward pass does."""
    if window is not None:
        groups: list[list[int]] = []
        stretch: dict[int, int] = {}
        for index in sorted(lengths):
            if stretch and sum(stretch.values()) + lengths[index] > window:
                groups += batches(stretch, budget=budget, voices=voices)
                stretch = {}
            stretch[index] = lengths[index]
        return groups + (batches(stretch, budget=budget, voices=voices) if stretch else [])
    groups = []
    current: list[int] = []
    used = 0
    def voice(i: int) -> str:
        return voices[i] if voices else ""

    for index in sorted(lengths, key=lambda i: (voice(i), lengths[i], i)):
        if current and (used + lengths[index] > budget or voice(index) != voice(current[-1])):
            groups.append(current)
            current, used = [], 0
        current.append(index)
        used += lengths[index]
    if current:
        groups.append(current)
    return groups


def plan_job(
    *, session: Session, objects: ObjectStore, job_id: uuid.UUID, batch_chars: int, window: int
) -> list[list[int]]:
    """Write chunk rows and the layout; return the batches to send now (at most about ``window``).

    Safe to repeat: chunk rows are inserted once, and for a job past planning (the reaper resumes
    a stalled job this way) the batches already handed out that still have pending chunks are
    returned again, topped up to ``window`` with new ones. An empty list with pending chunks
    never happens; an empty list means every chunk is done (time to assemble) or the job ended.
    """
    job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
    if job.is_terminal:
        return []
    if job.chunks_total == 0:
        job_repo.set_job_status(session=session, job_id=job_id, status=JobStatus.PLANNING)
        text = objects.get_bytes(job.text_key or source_key(job_id)).decode("utf-8")  # the key it was given
        params = JobParams.from_stored(job.params)
        submitted = text
        credited: frozenset[int] = frozenset()
        if params.ssml:  # a <speak> document: its chunks carry how they are spoken (books.job_ssml)
            texts, layout = split_ssml(text, params)
        else:
            sections = sections_for(text, params)
            if params.delivery:  # a retailer's delivery opens and closes with credits
                text, sections = credits.with_credits(text, sections, params)
            texts, layout = split(
                text, params.lang or "en", sections=sections, pauses=Pauses.from_params(params),
                cast=Cast.from_params(params),
            )
            if params.delivery:
                credited = frozenset(credits.credit_chunks(layout, len(texts)))
        lengths = {i: len(t) for i, t in enumerate(texts)}
        order = batches(lengths, budget=batch_chars, window=BOOK_ORDER_BATCHES * batch_chars, voices=layout.voices)
        layout = Layout(
            layout.pauses_ms, layout.chapters, order, layout.voices, layout.speakers,
            sources=chunk_runs(submitted, texts, skip=credited) if not params.ssml else [],
            steps=layout.steps,
        )
        objects.put_bytes(plan_key(job_id), layout.to_json(), content_type="application/json")
        # What each chunk bills (speech.billing): the chunks after the first carry the break before them.
        # Credits a delivery adds bill nothing, and the book's first chunk carries no break.
        free = set(credits.credit_chunks(layout, len(texts))) if params.delivery else set()
        first = min(set(range(len(texts))) - free, default=0)
        billed = [0 if i in free else billed_characters(t, continues=i > first) for i, t in enumerate(texts)]
        job_repo.add_chunks(session=session, job_id=job_id, texts=texts, characters=billed)
    job_repo.set_job_status(session=session, job_id=job_id, status=JobStatus.RUNNING)
    pending = {c.index for c in job_repo.pending_chunks(session=session, job_id=job_id)}
    if not pending:
        return []
    layout = Layout.from_json(objects.get_bytes(plan_key(job_id)))
    if not layout.batches:  # a plan written before batches were stored: send them all, as before
        return batches(
            {c.index: c.characters for c in job_repo.pending_chunks(session=session, job_id=job_id)}, budget=batch_chars
        )
    handed_out = job_repo.batches_dispatched(session=session, job_id=job_id)
    again = [b for b in layout.batches[:handed_out] if pending.intersection(b)]
    fresh = _claim(session, job_id, layout, max(window - len(again), 0))
    return again + fresh


def _claim(session: Session, job_id: uuid.UUID, layout: Layout, count: int) -> list[list[int]]:
    if count <= 0:
        return []
    end = job_repo.claim_batches(session=session, job_id=job_id, count=count)
    return [layout.batches[n] for n in range(end - count, min(end, len(layout.batches)))]


def next_batches(*, session: Session, objects: ObjectStore, job_id: uuid.UUID, count: int = 1) -> list[list[int]]:
    """What a finished batch hands on: the next ``count`` batches nobody has been given yet."""
    job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
    if job.status != JobStatus.RUNNING:
        return []
    layout = Layout.from_json(objects.get_bytes(plan_key(job_id)))
    if not layout.batches or job_repo.batches_dispatched(session=session, job_id=job_id) >= len(layout.batches):
        return []
    return _claim(session, job_id, layout, count)
