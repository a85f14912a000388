"""Sentence segmentation that keeps offsets into the original text.

A sentence ends at ``. ! ? …`` (plus any closing quotes or brackets) followed by whitespace or
the end of its paragraph, and at ``。！？ ؟ ।`` wherever they stand. A dot does not end a
sentence after a known abbreviation (``Mr.``, ``z. B.``, ``e.g.``; the lists come from the
language's lexicon), after a single letter (initials: ``J. K. Rowling``), before a number after
``No.``/``p.``/``Fig.``, or after a German ordinal (``am 3. Mai``). In cased scripts a terminator
followed by a lower-case word does not end the sentence either (``"Stop!" he said``, ``etc. and``).

Paragraphs are separated by a blank line (or U+2029). A single line break is only whitespace:
hard-wrapped prose (Project Gutenberg) breaks lines mid-sentence. The first sentence of every
paragraph after the first carries ``paragraph_break_before`` so batch jobs can pause longer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Final

from speech.text.languages import canonical
from speech.text.lexicons import lexicon

_PARAGRAPH: Final = re.compile(r"(?:\r?\n[ \t\f\v\r]*){2,}|\u2029")
_END: Final = re.compile(r"[.!?…‽؟।॥。！？]+[\"'”’»」』）)\]}›]*")
_ALWAYS_ENDS: Final = frozenset("。！？।॥؟")
_OPENERS: Final = "\"'“‘«「『（([{‹¿¡"
_BEFORE_NUMBER: Final = frozenset(
    """no nos nr n p pp pg pag pág págs fig figs vol ch chap cap art sec s tel núm nº n° bd kap abs blz
    hfdst ca approx aprox jan feb mar apr jun jul aug sep sept oct nov dec""".split()
)
# Always abbreviations, whatever the lexicon says (English titles are rules there, not keys).
_COMMON: Final = frozenset("e.g i.e cf vs viz mr mrs ms dr st prof".split())


@dataclass(frozen=True, slots=True)
class Span:
    """One sentence: ``text == source[start:end]``, with no surrounding whitespace."""

    start: int
    end: int
    text: str
    paragraph: int = 0
    """Index of the paragraph this sentence belongs to (0 for the first)."""
    paragraph_break_before: bool = False
    """True for the first sentence of every paragraph after the first."""


@cache
def _nonfinal(lang: str) -> frozenset[str]:
    """Lower-cased abbreviations (without their final dot) after which a dot never ends a sentence."""
    lex = lexicon(lang)
    found = set(_COMMON)
    for key in lex.abbreviations:
        pieces = key.split()
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            if piece.endswith(".") and not (last and key in lex.may_end_sentence):
                found.add(piece[:-1].lower())
    return frozenset(found)


def _next_visible(text: str, pos: int, end: int) -> str:
    """The first character after ``pos`` that is not whitespace or an opening quote/bracket."""
    while pos < end and (text[pos].isspace() or text[pos] in _OPENERS):
        pos += 1
    return text[pos] if pos < end else ""


def _is_boundary(text: str, m: re.Match[str], para_end: int, lang: str) -> bool:
    punct = m.group(0).rstrip("\"'”’»」』）)]}›")
    after = m.end()
    if any(ch in _ALWAYS_ENDS for ch in punct):
        return True
    if after < para_end and not text[after].isspace():
        return False  # 3.14, e.g., example.com, Yahoo!Inc
    nxt = _next_visible(text, after, para_end)
    if not nxt:
        return True
    if nxt.islower():
        return False
    if punct != ".":
        return True
    token_match = re.search(r"[^\s\"'“‘«(\[]+$", text[max(0, m.start() - 40) : m.start()])
    token = token_match.group(0) if token_match else ""
    lowered = token.lower()
    if lowered in _nonfinal(lang):
        return False
    if len(token) == 1 and token.isalpha():
        return False  # an initial: "J. K. Rowling", "z. B."
    if nxt.isdigit() and lowered in _BEFORE_NUMBER:
        return False
    if lang == "de" and token.isdigit() and len(token) <= 2 and nxt.isalpha():
        return False  # "am 3. Mai", "der 2. Weltkrieg"
    return True


def _sentences_in(text: str, start: int, end: int, lang: str) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    cursor = start
    for m in _END.finditer(text, start, end):
        if _is_boundary(text, m, end, lang):
            found.append((cursor, m.end()))
            cursor = m.end()
    found.append((cursor, end))
    trimmed = []
    for s, e in found:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            trimmed.append((s, e))
    return trimmed


def paragraphs(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each paragraph region (separators excluded, blank ones dropped)."""
    regions: list[tuple[int, int]] = []
    cursor = 0
    for m in _PARAGRAPH.finditer(text):
        regions.append((cursor, m.start()))
        cursor = m.end()
    regions.append((cursor, len(text)))
    return [(s, e) for s, e in regions if text[s:e].strip()]


def split_sentences(text: str, lang: str = "en") -> list[Span]:
    """Sentences of ``text`` with offsets; ``lang`` is any accepted tag (unknown ones segment
    as English). Whitespace-only text gives ``[]``."""
    code = canonical(lang) or "en"
    spans: list[Span] = []
    for index, (p_start, p_end) in enumerate(paragraphs(text)):
        for i, (s, e) in enumerate(_sentences_in(text, p_start, p_end, code)):
            spans.append(Span(s, e, text[s:e], index, paragraph_break_before=index > 0 and i == 0))
    return spans
