"""A job whose text is an SSML ``<speak>`` document: its chunks, each with how it is spoken.

A plain job's chunk is text, and everything about its sound is the job's. An SSML document
changes the sound inside the book (a ``break``, a ``prosody`` rate or volume, an ``emphasis``,
a ``phoneme``, a ``lang`` or ``voice`` switch, a ``mark``), so its chunks carry their *steps*:
the same stretches ``speech.text.ssml`` gives every other transport, written into ``plan.json``
beside the chunk texts (``Layout.steps``). Planning cuts the document:

- at every pause (``break``, the end of a ``p``): the pause becomes the silence before the next
  chunk, exactly as long as the document asks (assembly lays it in, no gap is added to it);
- at every change of voice: a ``voice`` switch goes through the cast machinery
  (``Layout.voices``), so voices of different engines and rates mix in one book, each brought to
  the book's rate and loudness (``books.casting.matched``); a ``voice`` may name a character
  of the job's cast, read by that character's voice;
- at ``CHUNK_CHARS``, as any job.

A chunk's text (what is billed, shown in the timestamps, checked by QA) is the spoken text of its
steps: never the markup. A ``mark`` has no text; its name is in the chunk's word timings.

Word offsets: each text step keeps where its characters were written in the document
(``Step.src``, packed by ``speech.text.offsets.pack`` relative to the chunk's ``at``), so word
timings point into the markup the customer sent, as they do on ``/ws3`` and SSE; the chunk's
runs are ``[(0, at)]``. Other edges:

- a ``break`` before the first word or after the last is a pause step inside the first or last
  chunk: the silence is in the audio, where the document put it, and the words after it are
  timed after it;
- chapters: ``<mark name="chapter:Title"/>`` starts a chapter (its own chunk, the chapter pause
  before it, "Title" in the m4b and the timestamps); character offsets (a request's
  ``chapters``) have no stable meaning in markup and stay refused at intake;
- a cast without ``voice`` elements: quotes are attributed from the prose
  (``books.ssml_attribution``), as in a plain job.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, NotRequired, TypedDict

from books.casting import SPEAKER_TURN_MS, Cast
from books.ssml_attribution import Voiced, attributed
from speech.text import chunk as chunk_text
from speech.text.markup import MarkSegment, PauseSegment, PhonemeSegment, Segment, TextSegment, Voicing
from speech.text.offsets import Packed, Runs, Traced, pack, unpack
from speech.text.ssml import parse_ssml

CHUNK_CHARS: Final = 600  # as scheduler.planning's
_SENTENCE_END: Final = re.compile(r"[.!?…][\"”’)]*\s*$")  # as scheduler.planning's: "“Well,”" ends no sentence
CHAPTER_MARK: Final = "chapter:"
"""A ``mark`` whose name starts so opens a chapter titled by the rest of the name."""


class Step(TypedDict):
    """One stretch of a chunk as ``plan.json`` holds it: text, phonemes (with the word they say),
    a mark or a pause, how it is voiced (absent: the job's own), and where its words were
    written in the document (``src``, relative to the chunk's ``at``; absent: not known)."""

    text: NotRequired[str]
    phonemes: NotRequired[str]
    word: NotRequired[str]
    mark: NotRequired[str]
    pause_ms: NotRequired[int]
    rate: NotRequired[float]
    gain_db: NotRequired[float]
    lang: NotRequired[str]
    src: NotRequired[Packed]


@dataclass(slots=True)
class SsmlChunk:
    steps: list[Step]
    voice: str
    speaker: str | None  # None: the narrator; a cast character's name; "": another voice by name
    pause_ms: int  # the silence before it
    at: int | None = None  # where its first written word stands in the document (its steps' ``src`` base)
    chapter: str | None = None  # the title of the chapter it opens

    @property
    def text(self) -> str:
        return spoken(self.steps)

    def runs(self) -> Runs | None:
        """Where the chunk's word offsets count in the document (``books.chunk_sources``'s form)."""
        return None if self.at is None else [(0, self.at)]

    def add(self, step: Step, origin: Traced | None) -> None:
        if origin is not None and len(origin):
            if self.at is None:
                self.at = min(origin.starts)
            step["src"] = pack(origin, self.at)
        self.steps.append(step)


@dataclass(frozen=True, slots=True)
class Speakers:
    """Who reads a stretch: the job's voice (or its cast's narrator), or what a ``voice`` names."""

    narrator: str
    cast: Cast | None = None

    def of(self, name: str | None) -> tuple[str, str | None]:
        if name is None or name == self.narrator:
            return self.narrator, None
        if self.cast is not None:
            for character, aliases in self.cast.aliases.items():
                if name == character or name in aliases:
                    return self.cast.characters[character], character
        return name, ""

    def read(self, item: Voiced) -> tuple[str, str | None]:
        """The voice and speaker of a stretch: attributed from the prose, or as markup names it."""
        if item.auto and self.cast is not None:
            return self.cast.voice(item.speaker), item.speaker
        segment = item.segment
        return self.of(segment.voicing.voice if isinstance(segment, (TextSegment, PhonemeSegment)) else None)


def voice_names(document: str, lang: str) -> list[str]:
    """The names the document's ``voice`` elements give, once each (intake checks them)."""
    names = [s.voicing.voice for s in parse_ssml(document, voice_lang=lang).segments
             if isinstance(s, (TextSegment, PhonemeSegment)) and s.voicing.voice]
    return list(dict.fromkeys(n for n in names if n))


def phoneme_voices(document: str, lang: str, speakers: Speakers) -> list[str]:
    """The voices that must speak IPA for the document: those reading a ``phoneme`` or a
    ``lang`` stretch in another language (intake asks each whether its engine can)."""
    return list(dict.fromkeys(
        c.voice for c in ssml_chunks(document, lang, speakers)
        if any("phonemes" in s or ("lang" in s and s["lang"] != lang) for s in c.steps)
    ))


def spoken_text(document: str, lang: str) -> str:
    """What the document says, for the checks and the estimate at intake: the chunks' texts."""
    return "\n\n".join(c.text for c in ssml_chunks(document, lang, Speakers("")) if c.text)


def spoken(steps: Sequence[Step]) -> str:
    """The steps' words as one text. The SSML reader drops the blank between two elements
    (``<emphasis>very</emphasis> <prosody>quiet</prosody>``), so a word meeting a word gets
    its space back."""
    out = ""
    for piece in (s.get("text", s.get("word", "")) for s in steps):
        if out and piece and (out[-1].isalnum() or out[-1] in ".!?,;:”\"") and piece[0].isalnum():
            out += " "
        out += piece
    return " ".join(out.split())


def _step(segment: TextSegment | PhonemeSegment, text: str | None = None) -> Step:
    step: Step = {"text": text if text is not None else segment.text} if isinstance(segment, TextSegment) else {
        "phonemes": segment.phonemes, "word": segment.word}
    v = segment.voicing
    if v.rate:
        step["rate"] = v.rate
    if v.gain_db:
        step["gain_db"] = v.gain_db
    if v.lang:
        step["lang"] = v.lang
    return step


def ssml_chunks(
    document: str, lang: str, speakers: Speakers, *, sentence_ms: int = 250, chapter_ms: int = 2000,
) -> list[SsmlChunk]:
    """The document cut into chunks of one voice and no pause inside (see the module's doc)."""
    chunks: list[SsmlChunk] = []
    pause: int | None = 0  # the pause before the next chunk; None: none asked, the natural one
    pending: list[Step] = []  # marks (and pauses, at the document's edges) not yet in a chunk
    chapter: str | None = None  # a chapter mark's title, for the next chunk
    tail: list[Step] = []  # the marks and breaks since the last word (a paragraph's own pause is no break)
    segments = parse_ssml(document, voice_lang=lang).segments
    voiced = attributed(segments, speakers.cast) if speakers.cast is not None else [Voiced(s, None) for s in segments]
    for item in voiced:
        segment = item.segment
        if isinstance(segment, PauseSegment):
            if chunks:
                pause = (pause or 0) + segment.ms
                tail += [] if segment.implied else [{"pause_ms": segment.ms}]
            elif not segment.implied:  # before the first word: a silence the first chunk opens with
                pending.append({"pause_ms": segment.ms})
            continue
        if isinstance(segment, MarkSegment):
            if segment.name.startswith(CHAPTER_MARK) and segment.name[len(CHAPTER_MARK):].strip():
                chapter = segment.name[len(CHAPTER_MARK):].strip()
                if chunks:
                    pause = max(pause or 0, chapter_ms)
            pending.append({"mark": segment.name})
            tail.append({"mark": segment.name})
            continue
        voice, speaker = speakers.read(item)
        for step, origin in _split(lang, segment):
            size = len(step.get("text", step.get("word", "")))
            last = chunks[-1] if chunks else None
            if (last is None or pause is not None or chapter is not None or last.voice != voice
                    or len(last.text) + size > CHUNK_CHARS):
                natural = sentence_ms if last is None or last.voice == voice or _SENTENCE_END.search(last.text) else SPEAKER_TURN_MS
                last = SsmlChunk([], voice, speaker, natural if pause is None else pause, chapter=chapter)
                chunks.append(last)
                chapter = None
            last.steps += pending
            last.add(step, origin)
            pending, pause, tail = [], None, []
    if chunks:  # after the last word: the marks, and the silence the last chunk closes with
        chunks[-1].steps += tail
    elif pending:
        chunks.append(SsmlChunk([s for s in pending if "mark" in s], speakers.narrator, None, 0))
    if chunks:
        chunks[0].pause_ms = 0
    return chunks


def _split(lang: str, segment: TextSegment | PhonemeSegment) -> list[tuple[Step, Traced | None]]:
    """The segment as steps with their origins: a text longer than a chunk cut at whole
    sentences, as any job's."""
    if isinstance(segment, PhonemeSegment):
        said = Traced.spread(segment.word, segment.source) if segment.source is not None and segment.word else None
        return [(_step(segment), said)]
    if len(segment.text) <= CHUNK_CHARS:
        return [(_step(segment), segment.origin)]
    out: list[tuple[Step, Traced | None]] = []
    cursor = 0
    for piece in chunk_text(segment.text, lang, limit=CHUNK_CHARS):
        at = segment.text.find(piece.text, cursor)
        origin = None
        if at >= 0:
            cursor = at + len(piece.text)
            if segment.origin is not None and cursor > at:
                said = segment.origin.slice(at, cursor)
                origin = said + Traced.spread(" ", (said.ends[-1], said.ends[-1]))
        out.append((_step(segment, piece.text + " "), origin))
    return out


def segments_of(steps: Sequence[Step]) -> list[Segment]:
    """A chunk's steps back as the core's segments (for lexicons and ``speech.stream_steps``),
    each text with its origin in the chunk's own frame (``at`` 0) when its step kept one."""
    out: list[Segment] = []
    for s in steps:
        voicing = Voicing(rate=s.get("rate"), gain_db=s.get("gain_db", 0.0), lang=s.get("lang"))
        src = s.get("src")
        if "mark" in s:
            out.append(MarkSegment(s["mark"]))
        elif "pause_ms" in s:
            out.append(PauseSegment(s["pause_ms"]))
        elif "phonemes" in s:
            word = s.get("word", "")
            where = unpack(word, src).span(0, len(word)) if src is not None and word else None
            out.append(PhonemeSegment(s["phonemes"], word=word, voicing=voicing, source=where))
        else:
            text = s.get("text", "")
            out.append(TextSegment(text, voicing=voicing, origin=unpack(text, src) if src is not None else None))
    return out


def origin_key(steps: Sequence[Step]) -> str:
    """A digest of where a chunk's words stand relative to one another in its document: a chunk
    reused from another job moves its word offsets only onto the same layout
    (``scheduler.chunk_cache``); its audio does not depend on it."""
    return hashlib.sha256(json.dumps([s.get("src") for s in steps]).encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class SsmlPlan:
    texts: list[str]
    pauses_ms: list[int]
    voices: list[str]
    speakers: list[str | None]
    steps: list[list[Step]] = field(default_factory=list)
    sources: list[Runs | None] = field(default_factory=list)
    chapters: list[tuple[str, int]] = field(default_factory=list)  # (title, first chunk)


def plan_ssml(document: str, lang: str, speakers: Speakers, *, sentence_ms: int, chapter_ms: int = 2000) -> SsmlPlan:
    chunks = ssml_chunks(document, lang, speakers, sentence_ms=sentence_ms, chapter_ms=chapter_ms)
    return SsmlPlan(
        [c.text for c in chunks], [c.pause_ms for c in chunks], [c.voice for c in chunks],
        [c.speaker for c in chunks], [c.steps for c in chunks], [c.runs() for c in chunks],
        [(c.chapter, i) for i, c in enumerate(chunks) if c.chapter is not None],
    )
