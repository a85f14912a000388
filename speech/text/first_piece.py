"""Where a stream's first sentence may be cut so that its first audio comes sooner.

A streamed request's first bytes wait for its whole first sentence: a 120-character sentence on
a Kokoro voice on two CPU cores is seconds of compute before the listener hears anything. Cut it
at a clause mark ("It is a truth universally acknowledged, | that a single man ...") and the
first piece is ready in a fraction of that, while the rest is made as the first plays. The
engine voices each piece as a sentence of its own, so a cut costs a little prosody (a clause
mark already carries a pause and a continuing tone, which is why it is the place to cut);
``speech.streaming`` cuts only where the voice's pace says the whole sentence would be late.

Cuts fall at a clause mark (``speech.text.chunking.CLAUSE_MARK``), the last one that keeps the
piece within ``max_chars``. Where an English sentence has none in reach, before a conjunction
or preposition ("The quick brown fox jumps | over the lazy dog ..."), the start of a phrase.
Where nothing is in reach (a loaded host: the budget holds a few characters), the earliest such
cut that leaves at most half the sentence in the first piece: later than the budget, still
sooner than the whole sentence.
Never inside a word, and never a piece too short to be worth a call of its own: the pieces
are the sentence split at whitespace, so every word is spoken once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from speech.text.chunking import CLAUSE_MARK

MIN_PIECE_CHARS: Final = 8
"""Neither side of a cut is shorter: a two-word piece is a call's fixed cost for half a second
of audio, and sounds clipped."""

# English words that begin a phrase: a cut before one falls between phrases, not inside one.
_PHRASE_START: Final = re.compile(
    r"\s(?=(?:and|but|or|nor|so|yet|that|which|who|whom|whose|where|when|while|because|although|though|"
    r"if|unless|until|since|as|than|to|of|in|on|at|by|with|without|for|from|over|under|into|onto|"
    r"through|after|before|near|about|against|between|during)\b)",
    re.IGNORECASE,
)


def cut_first(
    text: str, lang: str, max_chars: int, *, phrases: bool = True, allowed: Callable[[int], bool] | None = None
) -> tuple[str, str] | None:
    """``text`` as a first piece of at most ``max_chars`` characters ending at a clause mark (or,
    English and ``phrases``, before a phrase's first word) and the rest; None where the text
    fits already or no such cut leaves both sides at least ``MIN_PIECE_CHARS`` long.
    ``allowed(i)``: whether a cut before ``text[i]`` (``text`` as given, unstripped) may be made."""
    lead = len(text) - len(text.lstrip())
    text = text.strip()
    if len(text) <= max_chars:
        return None
    english = phrases and lang.split("-")[0].lower() == "en"

    def fits(end: int) -> bool:
        return allowed is None or allowed(lead + end)

    def cut(reach: int, earliest: bool) -> int | None:
        end = _last_cut(text, CLAUSE_MARK, reach, lambda m: m.end(), earliest=earliest, fits=fits)
        if end is None and english:
            end = _last_cut(text, _PHRASE_START, reach, lambda m: m.start(), earliest=earliest, fits=fits)
        return end

    end = cut(max_chars, False)
    if end is None and max_chars < len(text) // 2:  # nothing within the budget: the earliest in half
        end = cut(len(text) // 2, True)
    if end is None:
        return None
    return text[:end].strip(), text[end:].strip()


def _last_cut(
    text: str,
    pattern: re.Pattern[str],
    max_chars: int,
    at: Callable[[re.Match[str]], int],
    *,
    earliest: bool = False,
    fits: Callable[[int], bool] = lambda end: True,
) -> int | None:
    """The last (``earliest``: the first) cut within ``max_chars`` that leaves both sides at
    least ``MIN_PIECE_CHARS`` long."""
    best = None
    for match in pattern.finditer(text):
        end = at(match)
        if end > max_chars:
            break
        if end >= MIN_PIECE_CHARS and len(text) - end - 1 >= MIN_PIECE_CHARS and fits(end):
            best = end
            if earliest:
                break
    return best
