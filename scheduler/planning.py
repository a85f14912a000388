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

Fairness: a job does not put all its batches on the queue at once. Planning stores them as rows
(``store.db.batches``) and hands out only what its account's window has room for; every finished
batch hands on the next, in turn between the account's jobs (``scheduler.fair_share``), so a job
submitted behind another account's novels waits for a few batches, not for the novels.
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
from scheduler.fair_share import Handout, hand_out
from scheduler.job_params import JobParams
from scheduler.objects import plan_key, source_key
from speech.billing import billed_characters
from speech.text import chunk as chunk_text
from store.db import batches as batch_repo
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
    cast character's) and its steps; a ``break`` or a paragraph's end is the pause before a chunk,
    a ``chapter:`` mark a chapter's start. A delivery's credits are chunks of plain steps around
    the document, chapters of their own, the document's chapters between them."""
    cast = Cast.from_params(params)
    speakers = Speakers(cast.narrator if cast is not None else params.speaker, cast)
    pauses = Pauses.from_params(params)
    plan = plan_ssml(document, params.lang or "en", speakers, sentence_ms=pauses.sentence_ms, chapter_ms=pauses.chapter_ms)
    texts, steps, sources = list(plan.texts), list(plan.steps), list(plan.sources)
    layout = Layout(list(plan.pauses_ms), [ChapterMark(t, i) for t, i in plan.chapters], [], list(plan.voices),
                    list(plan.speakers), sources, steps)
    if not params.delivery:
        return texts, layout
    if not layout.chapters or layout.chapters[0].chunk > 0:  # the book opens with a chapter, as ACX files do
        layout.chapters.insert(0, ChapterMark(params.title or "Book", 0))
    opening, closing = credits.texts(params)
    narrator = speakers.narrator
    texts = [opening, *texts, closing]
    body = [ChapterMark(c.title, c.chunk + 1) for c in layout.chapters]
    return texts, Layout(
        [0, pauses.chapter_ms, *layout.pauses_ms[1:], pauses.chapter_ms],
        [ChapterMark(credits.OPENING, 0), *body, ChapterMark(credits.CLOSING, len(texts) - 1)], [],
        [narrator, *layout.voices, narrator], [None, *layout.speakers, None],
        [None, *sources, None], [[{"text": opening}], *steps, [{"text": closing}]],
    )


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
) -> list[Handout]:
    """Write chunk rows, batch rows and the layout; return the batches to send now: what the
    job's account has room for in its ``window`` (``scheduler.fair_share``; they may be another
    job's of the account, whose turn it is).

    Safe to repeat: rows are inserted once, and for a job past planning (the reaper resumes a
    stalled job this way) the job's batches handed out and not finished are returned again (their
    message may be lost), and the account's free places filled. An empty list means every chunk
    is done (time to assemble), the job ended, or the account's window is full: this job's turn
    comes when one of its batches ends.
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
            if params.delivery:
                credited = frozenset(credits.credit_chunks(layout, len(texts)))
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
            sources=chunk_runs(submitted, texts, skip=credited) if not params.ssml else layout.sources,
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
        return [
            Handout(job_id, b)
            for b in batches(
                {c.index: c.characters for c in job_repo.pending_chunks(session=session, job_id=job_id)}, budget=batch_chars
            )
        ]
    batch_repo.add_batches(
        session=session, job_id=job_id, batches=layout.batches, pending=pending,
        sent=job_repo.batches_dispatched(session=session, job_id=job_id),  # a job planned before the rows
    )
    again = [Handout(job_id, b) for b in batch_repo.unfinished(session=session, job_id=job_id, pending=pending)]
    return again + hand_out(session=session, account_id=job.account_id, window=window)
