"""Where each of a job's chunks was written in the job's text, so a book's word timings point
at the text the customer submitted (for an upload: the text lector extracted from it).

Planning cuts chunks out of a copy of the text that is not the text itself: Markdown heading
marks are taken off (``chapters.spoken``), a cast's paragraphs have their whitespace collapsed
and are cut at changes of voice (``books.casting``), a delivery adds credits. None of them
rewrites a word, so a chunk's words are found again in the text in order, whitespace between
them being free: each chunk is searched for from where the one before it ended, within a window
(a chunk that is not there, a credit, gets no offsets and moves nothing). The result is stored
per chunk in ``plan.json`` as ``speech.text.offsets.Runs``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from speech.text.offsets import Runs

WINDOW: Final = 20_000
"""How far past the previous chunk a chunk may start (what planning drops between two chunks is
a heading line or a chapter's title, never pages)."""

_TOKEN: Final = re.compile(r"\S+")


def chunk_runs(text: str, chunks: Sequence[str], skip: frozenset[int] = frozenset()) -> list[Runs | None]:
    """For each chunk, its runs in ``text``; None for a chunk in ``skip`` or not found."""
    out: list[Runs | None] = []
    cursor = 0
    for index, chunk in enumerate(chunks):
        tokens = [(m.start(), m.group(0)) for m in _TOKEN.finditer(chunk)]
        places = None if index in skip or not tokens else _find(text, [t for _, t in tokens], cursor, len(chunk) + WINDOW)
        if places is None:
            out.append(None)
            continue
        runs: Runs = []
        for (at, _), place in zip(tokens, places, strict=True):
            if not runs or place - at != runs[-1][1] - runs[-1][0]:
                runs.append((at, place))
        out.append(runs)
        cursor = places[-1] + len(tokens[-1][1])
    return out


def _find(text: str, tokens: list[str], start: int, window: int) -> list[int] | None:
    """Where each of ``tokens`` stands in ``text``, the first within ``window`` of ``start``,
    each next one after whitespace (any run of it) behind the one before; None if nowhere."""
    first = tokens[0]
    at = text.find(first, start, start + window)
    while at >= 0:
        places = [at]
        position = at + len(first)
        for token in tokens[1:]:
            following = position
            while following < len(text) and text[following].isspace():
                following += 1
            if following == position or not text.startswith(token, following):
                break
            places.append(following)
            position = following + len(token)
        else:
            return places
        at = text.find(first, at + 1, start + window)
    return None
