"""Sentence-aligned chunks within the request limit, for batch jobs and long streaming input.

Whole sentences are packed greedily up to ``limit`` characters; a chunk never spans a paragraph
break (the stitcher pauses longer there). A sentence longer than the limit is cut at the last
clause mark (``, ; : — –`` and their CJK forms) that leaves a piece of at least a quarter of the
limit, else at the last word boundary, and only a single "word" longer than the limit is cut
mid-word.

Offsets: the chunks partition the source. ``source[c.start:c.end]`` of consecutive chunks
concatenate to the source exactly; the whitespace between two chunks belongs to the earlier one
(the leading whitespace of the text to the first). ``c.text`` is that span without its
surrounding whitespace, and it is what the limit applies to: whitespace between chunks is never
sent to the engine nor billed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from speech.text.segment import split_sentences

REQUEST_LIMIT: Final = 1000
"""The vendor API contract's limit: at most 1,000 characters per synthesis request."""

CLAUSE_MARK: Final = re.compile(r"[,;:—–](?:[\"'”’»)\]]*)(?=\s)|—(?=\w)|[、，；：]")
"""A clause mark (with any closing quote or bracket after it) followed by whitespace; an em dash
or a CJK mark needs no space after it. Its ``end()`` is where a piece may end
(``speech.text.first_piece`` cuts a stream's first sentence there too)."""
_SPACE_RUN: Final = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Chunk:
    index: int
    start: int
    """Offset of this chunk's source span (partitioning the text, whitespace included)."""
    end: int
    text: str
    """The span without surrounding whitespace: what is synthesized; ``len(text) <= limit``."""
    paragraph_break_before: bool = False


@dataclass(frozen=True, slots=True)
class _Piece:
    start: int
    end: int
    paragraph_break_before: bool


def _cut(text: str, pos: int, end: int, limit: int) -> int:
    """End of the next piece of ``text[pos:end]`` (which is longer than ``limit``)."""
    window_end = pos + limit
    best = -1
    for m in CLAUSE_MARK.finditer(text, pos, end):
        if m.end() > window_end:
            break
        if m.end() - pos >= max(1, limit // 4):
            best = m.end()
    if best > 0:
        return best
    # Last whitespace run that starts within the window (a piece of exactly `limit` is fine).
    for m in _SPACE_RUN.finditer(text, pos + 1, min(window_end + 1, end)):
        best = m.start()
    if best > pos:
        return best
    return window_end  # a single "word" longer than the limit


def _pieces(text: str, start: int, end: int, limit: int, paragraph_break: bool) -> list[_Piece]:
    if end - start <= limit:
        return [_Piece(start, end, paragraph_break)]
    pieces: list[_Piece] = []
    pos = start
    while end - pos > limit:
        cut = _cut(text, pos, end, limit)
        pieces.append(_Piece(pos, cut, paragraph_break and not pieces))
        pos = cut
        while pos < end and text[pos].isspace():
            pos += 1
    if pos < end:
        pieces.append(_Piece(pos, end, paragraph_break and not pieces))
    return pieces


def chunk(text: str, lang: str = "en", *, limit: int = REQUEST_LIMIT) -> list[Chunk]:
    """Split ``text`` into chunks of whole sentences, each ``text`` at most ``limit`` characters.

    Whitespace-only text gives ``[]``. ``lang`` is any accepted tag.
    """
    if limit < 1:
        raise ValueError("limit must be at least 1")
    pieces: list[_Piece] = []
    for span in split_sentences(text, lang):
        pieces.extend(_pieces(text, span.start, span.end, limit, span.paragraph_break_before))

    groups: list[tuple[int, int, bool]] = []  # (content start, content end, paragraph break)
    for piece in pieces:
        if groups and not piece.paragraph_break_before and piece.end - groups[-1][0] <= limit:
            groups[-1] = (groups[-1][0], piece.end, groups[-1][2])
        else:
            groups.append((piece.start, piece.end, piece.paragraph_break_before))

    chunks: list[Chunk] = []
    for i, (content_start, content_end, paragraph_break) in enumerate(groups):
        span_start = 0 if i == 0 else content_start
        span_end = groups[i + 1][0] if i + 1 < len(groups) else len(text)
        chunks.append(Chunk(i, span_start, span_end, text[content_start:content_end], paragraph_break))
    return chunks
