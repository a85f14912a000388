"""Who reads each stretch of an SSML job whose quotes no ``<voice>`` element assigns.

A cast job in plain text has its quotes attributed from the prose ("said Elizabeth",
``books.attribution``); a customer who sends the same book as SSML, for a ``break`` or a
``phoneme`` here and there, expects the same reading, not every quote in the narrator's voice.
So the document's stretches outside any ``<voice>`` are read as the paragraphs they make (the
runs of text between two pauses: a ``p`` ends with one), attributed as plain text is, and each
text stretch is cut where the speaker changes. A stretch inside a ``<voice>`` keeps that voice:
what the markup says explicitly wins over what the prose suggests.

The attribution sees each paragraph's words only; the pieces it returns are found again in that
text in order, so every character (and its offsets into the document) lands with one speaker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from books.attribution import Characters, attribute
from books.casting import Cast
from speech.text.markup import MarkSegment, PauseSegment, PhonemeSegment, Segment, TextSegment


@dataclass(frozen=True, slots=True)
class Voiced:
    """A segment and who reads it: ``speaker`` None for the narration, a character's name for
    a quote, ``""`` for a quote nobody is named for; ``auto``: attributed, not named by markup."""

    segment: Segment
    speaker: str | None
    auto: bool = False


def attributed(segments: Sequence[Segment], cast: Cast) -> list[Voiced]:
    """``segments`` with their speakers; text stretches cut where the speaker changes."""
    paragraphs: list[list[int]] = [[]]  # indices of the attributable segments of each paragraph
    for index, segment in enumerate(segments):
        if isinstance(segment, PauseSegment) or (
            isinstance(segment, (TextSegment, PhonemeSegment)) and segment.voicing.voice is not None
        ):
            paragraphs.append([])
        elif isinstance(segment, (TextSegment, PhonemeSegment)):
            paragraphs[-1].append(index)
    paragraphs = [p for p in paragraphs if p]
    texts: list[str] = []
    places: list[list[tuple[int, int]]] = []  # each segment's (start, end) in its paragraph's text
    for indices in paragraphs:
        text, spans = "", []
        for index in indices:
            segment = segments[index]
            words = segment.text if isinstance(segment, TextSegment) else segment.word if isinstance(segment, PhonemeSegment) else ""
            if text:
                text += " "
            spans.append((len(text), len(text) + len(words)))
            text += words
        texts.append(text)
        places.append(spans)
    speakers_of: dict[int, list[str | None]] = {}  # segment index -> its characters' speakers
    for indices, text, spans, stretches in zip(paragraphs, texts, places, attribute(texts, Characters.of(cast.aliases)), strict=True):
        who = _per_character(text, [(s.text, s.speaker) for s in stretches])
        for index, (start, end) in zip(indices, spans, strict=True):
            speakers_of[index] = who[start:end]
    out: list[Voiced] = []
    for index, segment in enumerate(segments):
        said = speakers_of.get(index)
        if said is None or isinstance(segment, MarkSegment):
            out.append(Voiced(segment, None))
        elif isinstance(segment, PhonemeSegment):
            out.append(Voiced(segment, said[0] if said else None, auto=True))
        elif isinstance(segment, TextSegment):
            out.extend(Voiced(piece, speaker, auto=True) for piece, speaker in _cut(segment, said, cast))
    return out


def _per_character(text: str, stretches: Sequence[tuple[str, str | None]]) -> list[str | None]:
    """The speaker of each character of ``text``: each stretch's, found in order; what lies
    between two stretches (blanks, an inline tag) goes with the stretch before it."""
    who: list[str | None] = [None] * len(text)
    cursor = 0
    previous: str | None = stretches[0][1] if stretches else None
    for piece, speaker in stretches:
        at = text.find(piece, cursor)
        if at < 0:
            continue
        who[cursor:at] = [previous] * (at - cursor)
        who[at : at + len(piece)] = [speaker] * len(piece)
        cursor, previous = at + len(piece), speaker
    who[cursor:] = [previous] * (len(text) - cursor)
    return who


def _cut(segment: TextSegment, who: Sequence[str | None], cast: Cast) -> list[tuple[TextSegment, str | None]]:
    """The segment in pieces of one voice each (a sentence stays whole where its quote and its
    narration share a voice), each with its own slice of the origin and its first speaker."""
    pieces: list[tuple[TextSegment, str | None]] = []
    start = 0
    for k in range(1, len(segment.text) + 1):
        if k < len(segment.text) and cast.voice(who[k]) == cast.voice(who[start]):
            continue
        text = segment.text[start:k]
        if text.strip():
            origin = segment.origin.slice(start, k) if segment.origin is not None else None
            speaker = next((w for w in who[start:k] if w is not None), None)
            pieces.append((TextSegment(text, segment.speed, segment.voicing, origin), speaker))
        start = k
    return pieces
