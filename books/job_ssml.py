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
Chapters and a retailer's credits address the text by character offsets, which a document of
markup has no stable meaning for: an SSML job has neither (refused at intake).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, NotRequired, TypedDict

from books.casting import SPEAKER_TURN_MS, Cast
from speech.text import chunk as chunk_text
from speech.text.markup import MarkSegment, PauseSegment, PhonemeSegment, Segment, TextSegment, Voicing
from speech.text.ssml import parse_ssml

CHUNK_CHARS: Final = 600  # as scheduler.planning's


class Step(TypedDict):
    """One stretch of a chunk as ``plan.json`` holds it: text, phonemes (with the word they say)
    or a mark, and how it is voiced (absent: the job's own)."""

    text: NotRequired[str]
    phonemes: NotRequired[str]
    word: NotRequired[str]
    mark: NotRequired[str]
    rate: NotRequired[float]
    gain_db: NotRequired[float]
    lang: NotRequired[str]


@dataclass(slots=True)
class SsmlChunk:
    steps: list[Step]
    voice: str
    speaker: str | None  # None: the narrator; a cast character's name; "": another voice by name
    pause_ms: int  # the silence before it

    @property
    def text(self) -> str:
        return spoken(self.steps)


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
    return "\n\n".join(c.text for c in ssml_chunks(document, lang, Speakers("")))


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


def ssml_chunks(document: str, lang: str, speakers: Speakers, *, sentence_ms: int = 250) -> list[SsmlChunk]:
    """The document cut into chunks of one voice and no pause inside (see the module's doc)."""
    chunks: list[SsmlChunk] = []
    pause: int | None = 0  # the pause before the next chunk; None: none asked, the natural one
    marks: list[Step] = []
    for segment in parse_ssml(document, voice_lang=lang).segments:
        if isinstance(segment, PauseSegment):
            pause = (pause or 0) + segment.ms
            continue
        if isinstance(segment, MarkSegment):
            marks.append({"mark": segment.name})
            continue
        voice, speaker = speakers.of(segment.voicing.voice)
        pieces: list[str | None] = [None]
        if isinstance(segment, TextSegment) and len(segment.text) > CHUNK_CHARS:  # whole sentences, as any job
            pieces = [p.text + " " for p in chunk_text(segment.text, lang, limit=CHUNK_CHARS)]
        for piece in pieces:
            step = _step(segment, piece)
            size = len(step.get("text", step.get("word", "")))
            last = chunks[-1] if chunks else None
            if last is None or pause is not None or last.voice != voice or len(last.text) + size > CHUNK_CHARS:
                natural = sentence_ms if last is None or last.voice == voice or last.text.endswith((".", "!", "?", "”", '"')) else SPEAKER_TURN_MS
                last = SsmlChunk([], voice, speaker, natural if pause is None else pause)
                chunks.append(last)
            last.steps += [*marks, step]
            marks, pause = [], None
    if marks:
        if chunks:
            chunks[-1].steps += marks
        else:
            chunks.append(SsmlChunk(marks, speakers.narrator, None, 0))
    if chunks:
        chunks[0].pause_ms = 0
    return chunks


def segments_of(steps: Sequence[Step]) -> list[Segment]:
    """A chunk's steps back as the core's segments (for lexicons and ``speech.stream_steps``)."""
    out: list[Segment] = []
    for s in steps:
        voicing = Voicing(rate=s.get("rate"), gain_db=s.get("gain_db", 0.0), lang=s.get("lang"))
        if "mark" in s:
            out.append(MarkSegment(s["mark"]))
        elif "phonemes" in s:
            out.append(PhonemeSegment(s["phonemes"], word=s.get("word", ""), voicing=voicing))
        else:
            out.append(TextSegment(s.get("text", ""), voicing=voicing))
    return out


@dataclass(frozen=True, slots=True)
class SsmlPlan:
    texts: list[str]
    pauses_ms: list[int]
    voices: list[str]
    speakers: list[str | None]
    steps: list[list[Step]] = field(default_factory=list)


def plan_ssml(document: str, lang: str, speakers: Speakers, *, sentence_ms: int) -> SsmlPlan:
    chunks = ssml_chunks(document, lang, speakers, sentence_ms=sentence_ms)
    return SsmlPlan(
        [c.text for c in chunks], [c.pause_ms for c in chunks], [c.voice for c in chunks],
        [c.speaker for c in chunks], [c.steps for c in chunks],
    )
