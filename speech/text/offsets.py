"""Text that knows where it came from: every character's span in the text the customer sent.

Normalisation rewrites a sentence many times ("40-60°C" -> "40 to 60°C" -> ... -> "forty to
sixty degrees Celsius"), and word timings are wanted against what the customer wrote. So the
front end carries a ``Traced`` text instead of a plain string: each character holds the
``[start, end)`` span of the submitted text it stands for. A character copied through a pass
keeps its span; the characters a pass writes in place of a match take the span of what they
replaced, aligned word by word so that the words a rewrite keeps ("November" in "November 22",
"Chapter" in "Chapter IV", the words inside ``*emphasis*``) keep their own spans.

``spoken_words`` then gives each spoken word the span of its characters, and words whose spans
overlap become one unit with their union: "forty", "to", "sixty", "degrees" and "Celsius" all
point at "40-60°C", because no narrower part of the written text says any one of them.

``locate`` is where the engine's word timings meet the map: the engines time the words of the
text they were given (``speech.text.words.split_words``), so the n-th timing is found among
the spoken words in order, and takes that word's span.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import Final, TypeAlias

from speech.text.words import WORD_TRIM
from speech.types import WordTiming

SourceSpan: TypeAlias = tuple[int, int]
"""``(start, end)`` in the submitted text: ``submitted[start:end]`` is what was written."""

Replacement: TypeAlias = str | Callable[[re.Match[str]], str]

_TOKEN: Final = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class Traced:
    """``text`` and, for each of its characters, the span of the source it stands for
    (``len(starts) == len(ends) == len(text)``)."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    @classmethod
    def of(cls, text: str, base: int = 0) -> Traced:
        """``text`` as it stands at ``base`` in the source, one character for one."""
        return cls(text, tuple(range(base, base + len(text))), tuple(range(base + 1, base + len(text) + 1)))

    @classmethod
    def spread(cls, text: str, span: SourceSpan) -> Traced:
        """``text`` written in place of ``span``: every character stands for all of it."""
        return cls(text, (span[0],) * len(text), (span[1],) * len(text))

    @classmethod
    def join(cls, parts: Iterable[Traced]) -> Traced:
        items = list(parts)
        return cls(
            "".join(p.text for p in items),
            tuple(chain.from_iterable(p.starts for p in items)),
            tuple(chain.from_iterable(p.ends for p in items)),
        )

    def __len__(self) -> int:
        return len(self.text)

    def __add__(self, other: Traced) -> Traced:
        return Traced(self.text + other.text, self.starts + other.starts, self.ends + other.ends)

    def slice(self, start: int, end: int) -> Traced:
        return Traced(self.text[start:end], self.starts[start:end], self.ends[start:end])

    def parts_at(self, at: int) -> bool:
        """Whether cutting ``text`` at ``at`` leaves each side its own stretch of the source: no
        cut inside what one written token became ("40-60°C" read as "forty to sixty degrees
        Celsius"), whose words each point at the whole token and would lose part of it."""
        if at <= 0 or at >= len(self.text):
            return True
        return self.starts[at] >= self.ends[at - 1]

    def span(self, start: int, end: int) -> SourceSpan | None:
        """The source span of ``text[start:end]`` (None when it is empty)."""
        if start >= end:
            return None
        return min(self.starts[start:end]), max(self.ends[start:end])

    def strip(self) -> Traced:
        stripped = self.text.strip()
        if stripped == self.text:
            return self
        start = len(self.text) - len(self.text.lstrip())
        return self.slice(start, start + len(stripped))

    def translate(self, table: dict[int, str]) -> Traced:
        """``str.translate`` with a table of one character for one (spans unchanged)."""
        return Traced(self.text.translate(table), self.starts, self.ends)

    def sub(self, pattern: re.Pattern[str], repl: Replacement) -> Traced:
        """``pattern.sub(repl, text)``, each replacement aligned with what it replaced."""
        if not callable(repl) and pattern.sub(repl, self.text) == self.text:
            return self  # the common case (a space for a space): no Python per match
        parts: list[Traced] = []
        cursor = 0
        literal = repl if isinstance(repl, str) and "\\" not in repl else None  # no template to expand
        for m in pattern.finditer(self.text):
            new = literal if literal is not None else repl(m) if callable(repl) else m.expand(repl)
            start, end = m.span()
            if new == m.group(0):
                continue
            parts.append(self.slice(cursor, start))
            parts.append(rewritten(self.slice(start, end), new, self._at(start)))
            cursor = end
        if not parts:
            return self
        parts.append(self.slice(cursor, len(self.text)))
        return Traced.join(parts)

    def replace(self, old: str, new: str) -> Traced:
        return self.sub(re.compile(re.escape(old)), lambda m: new)

    def rewrite(self, new: str) -> Traced:
        """The whole text replaced by ``new`` (a converter that is no regex: kana readings),
        aligned character by character: the runs it kept keep their spans."""
        if new == self.text:
            return self
        matcher = difflib.SequenceMatcher(None, self.text, new, autojunk=False)
        parts: list[Traced] = []
        for op, a1, a2, b1, b2 in matcher.get_opcodes():
            if op == "equal":
                parts.append(self.slice(a1, a2))
            elif b2 > b1:
                span = self.span(a1, a2) or self._at(a1)
                parts.append(Traced.spread(new[b1:b2], span))
        return Traced.join(parts)

    def _at(self, position: int) -> SourceSpan:
        """An empty span where ``position`` falls (text inserted between two characters)."""
        if not self.text:
            return (0, 0)
        if position >= len(self.text):
            return (self.ends[-1], self.ends[-1])
        return (self.starts[position], self.starts[position])


def rewritten(old: Traced, new: str, at: SourceSpan) -> Traced:
    """``new`` written in place of ``old``: the words it keeps keep their spans, a word found
    inside the one word it replaces takes that part ("**bold**" -> "bold"), and everything
    else takes the span of the words it replaced (the whole of ``old`` when it replaced none;
    ``at``, where ``old`` stands, when ``old`` is empty)."""
    whole = old.span(0, len(old)) or at
    old_tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(old.text)]
    new_tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(new)]
    starts = [whole[0]] * len(new)
    ends = [whole[1]] * len(new)

    def copy(a: int, b: int, source: int) -> None:
        starts[a:b] = old.starts[source : source + b - a]
        ends[a:b] = old.ends[source : source + b - a]

    matcher = difflib.SequenceMatcher(
        None, [old.text[a:b] for a, b in old_tokens], [new[a:b] for a, b in new_tokens], autojunk=False
    )
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            for (a, b), (c, _) in zip(new_tokens[j1:j2], old_tokens[i1:i2], strict=True):
                copy(a, b, c)
            continue
        if j1 == j2:
            continue
        if i2 - i1 == 1 and j2 - j1 == 1:
            (c, d), (a, b) = old_tokens[i1], new_tokens[j1]
            inside = old.text.find(new[a:b], c, d)
            if inside >= 0:
                copy(a, b, inside)
                continue
        span = old.span(old_tokens[i1][0], old_tokens[i2 - 1][1]) if i2 > i1 else whole
        assert span is not None
        first, last = new_tokens[j1][0], new_tokens[j2 - 1][1]
        starts[first:last] = [span[0]] * (last - first)
        ends[first:last] = [span[1]] * (last - first)
    return Traced(new, tuple(starts), tuple(ends))


@dataclass(frozen=True, slots=True)
class SpokenWord:
    """A word of a spoken text as the engines split it, and the source it was read from."""

    word: str
    start: int  # where the word sits in the spoken text
    end: int
    source: SourceSpan


def spoken_words(traced: Traced) -> list[SpokenWord]:
    """The words of ``traced.text`` (whitespace tokens less edge punctuation, as
    ``speech.text.words.split_words``), each with its source span; words whose spans overlap share their union."""
    words: list[SpokenWord] = []
    for m in _TOKEN.finditer(traced.text):
        token = m.group(0)
        word = token.strip(WORD_TRIM)
        if not word:
            continue
        start = m.start() + token.index(word)
        span = traced.span(start, start + len(word))
        assert span is not None
        words.append(SpokenWord(word, start, start + len(word), span))
    return _merged(words)


def _merged(words: list[SpokenWord]) -> list[SpokenWord]:
    """Words whose spans overlap, directly or through a word between them, share the union."""
    groups: list[tuple[int, int, list[SpokenWord]]] = []  # (low, high, words), in order
    for word in words:
        low, high = word.source
        members = [word]
        while groups and groups[-1][0] < high and low < groups[-1][1]:
            g_low, g_high, g_words = groups.pop()
            low, high, members = min(low, g_low), max(high, g_high), g_words + members
        groups.append((low, high, members))
    return [replace(w, source=(low, high)) for low, high, members in groups for w in members]


def locate(timings: Sequence[WordTiming], traced: Traced | None) -> list[WordTiming]:
    """The engine's timings for ``traced.text``, each with the span of the word it times. A
    timing is matched to the next spoken word it names; one that names none (a segmenter that
    cuts words its own way: Japanese) is looked up in the text from there on; a timing found
    neither way keeps no span."""
    if traced is None or not timings:
        return list(timings)
    words = spoken_words(traced)
    out: list[WordTiming] = []
    index = 0  # the next spoken word
    cursor = 0  # the next character of the spoken text
    for timing in timings:
        if not timing.word:
            out.append(timing)
            continue
        found = next((k for k in range(index, len(words)) if words[k].word == timing.word), None)
        if found is not None:
            out.append(replace(timing, source=words[found].source))
            index, cursor = found + 1, words[found].end
            continue
        at = traced.text.find(timing.word, cursor)
        span = traced.span(at, at + len(timing.word)) if at >= 0 else None
        if span is None:
            out.append(timing)
            continue
        out.append(replace(timing, source=span))
        cursor = at + len(timing.word)
        while index < len(words) and words[index].end <= cursor:
            index += 1
    return out


Runs: TypeAlias = list[tuple[int, int]]
"""A piecewise shift: ``(text_position, source_position)`` pairs, sorted; a character at ``p``
stands at ``source + p - text`` of the last pair with ``text <= p``. The compact form of a map
where text was copied, not rewritten (a job's chunks in its text: ``books.chunk_sources``)."""


def local(span: SourceSpan, runs: Runs) -> SourceSpan:
    """The inverse of ``placed``: a span of the source (the book) as a span of the run-mapped text
    (the chunk), for a span that lies inside the chunk."""
    def back(q: int) -> int:
        k = max((i for i, r in enumerate(runs) if r[1] <= q), default=0)
        return runs[k][0] + q - runs[k][1]

    if span[1] <= span[0]:
        return back(span[0]), back(span[0])
    return back(span[0]), back(span[1] - 1) + 1


def placed(span: SourceSpan, runs: Runs) -> SourceSpan:
    """A span of a run-mapped text (a chunk) as a span of its source (the book)."""
    def at(p: int) -> int:
        k = max((i for i, r in enumerate(runs) if r[0] <= p), default=0)
        return runs[k][1] + p - runs[k][0]

    if span[1] <= span[0]:
        return at(span[0]), at(span[0])
    return at(span[0]), at(span[1] - 1) + 1


Packed: TypeAlias = list[list[int]]
"""A ``Traced``'s spans in a form JSON keeps small (an SSML job's steps in ``plan.json``):
``[at, start, end, copied]`` runs from character ``at`` of the text on. ``copied`` 1: a run
written as it stands (character ``at + k`` spans ``[start + k, start + k + 1)``); 0: a run read
in place of ``[start, end)`` (a ``sub`` alias, a ``say-as`` reading, an ``&amp;``)."""


def pack(traced: Traced, base: int = 0) -> Packed:
    """``traced``'s spans, each made relative to ``base`` (``unpack`` adds it back)."""
    runs: Packed = []
    for k, (start, end) in enumerate(zip(traced.starts, traced.ends, strict=True)):
        start, end = start - base, end - base
        last = runs[-1] if runs else None
        if last is not None:
            length = k - last[0]
            if last[3] and start == last[1] + length and end == start + 1:
                continue
            if not last[3] and (start, end) == (last[1], last[2]):
                continue
            if length == 1 and last[3] == 0 and last[2] == last[1] + 1 and start == last[1] + 1 and end == start + 1:
                last[3], last[2] = 1, last[1]  # two characters in a row, each its own: a copied run
                continue
        runs.append([k, start, end, 0])
    for run in runs:
        if run[3]:
            run[2] = run[1]  # a copied run's end is implied by its length
    return runs


def unpack(text: str, packed: Packed, base: int = 0) -> Traced:
    """The ``Traced`` of ``text`` that ``pack`` gave ``packed`` for, at ``base``."""
    starts: list[int] = []
    ends: list[int] = []
    bounds = [run[0] for run in packed[1:]] + [len(text)]
    for (at, start, end, copied), stop in zip(packed, bounds, strict=True):
        for k in range(stop - at):
            starts.append(base + (start + k if copied else start))
            ends.append(base + (start + k + 1 if copied else end))
    if len(starts) != len(text):
        raise ValueError(f"packed spans for {len(starts)} characters, the text has {len(text)}")
    return Traced(text, tuple(starts), tuple(ends))
