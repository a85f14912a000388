"""SSML ``say-as``: written forms read as the document says, in the stretch's language.

The result is text the normaliser reads as intended (``"1 2 3"`` for digits, the ordinal's own
words), so the usual passes still run on it. A value that is not what ``interpret-as`` claims
is an ``SsmlError`` naming it: reading "abc" as a cardinal silently would say something else.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from speech.errors import SsmlError
from speech.text.lexicons import lexicon
from speech.text.normalize_datetime import say_date, say_time
from speech.text.numbers import cardinal, year

_DATE_FORMATS: Final = frozenset("mdy dmy ymd ydm ym my md dm y m d".split())
_TIME: Final = re.compile(r"^\s*(\d{1,2})(?:[:.h](\d{2}))?(?::\d{2})?\s*([ap]\.?m\.?)?\s*$", re.IGNORECASE)


def _characters(text: str, lang: str, fmt: str | None, where: str) -> str:
    """Each letter and digit on its own: "NASA" -> "N A S A"."""
    return " ".join(c for c in text if not c.isspace())


def _cardinal(text: str, lang: str, fmt: str | None, where: str) -> str:
    number = re.sub(r"[\s,.'’_]", "", text)
    if not re.fullmatch(r"-?\d+", number):
        raise SsmlError(f'say-as cardinal at {where}: "{text[:40]}" is not a whole number')
    return cardinal(int(number), lang)


def _ordinal(text: str, lang: str, fmt: str | None, where: str) -> str:
    number = re.sub(r"(?<=\d)(st|nd|rd|th|º|ª|e|er|re|ème|\.)$", "", text.strip(), flags=re.IGNORECASE)
    if not number.isdigit():
        raise SsmlError(f'say-as ordinal at {where}: "{text[:40]}" is not a whole number')
    return lexicon(lang).say_ordinal(int(number))


def _digits(text: str, lang: str, fmt: str | None, where: str) -> str:
    digits = [c for c in text if c.isdigit()]
    if not digits:
        raise SsmlError(f'say-as digits at {where}: "{text[:40]}" has no digits')
    return " ".join(digits)


def _telephone(text: str, lang: str, fmt: str | None, where: str) -> str:
    """Digit by digit, a short pause (a comma) between the number's groups."""
    groups = [" ".join(group) for group in re.findall(r"\d+", text)]
    if not groups:
        raise SsmlError(f'say-as telephone at {where}: "{text[:40]}" has no digits')
    return ("plus " if text.strip().startswith("+") and lang == "en" else "") + ", ".join(groups)


def _date(text: str, lang: str, fmt: str | None, where: str) -> str:
    order = (fmt or "ymd").lower()
    if order not in _DATE_FORMATS:
        raise SsmlError(f'say-as date at {where}: format "{order[:20]}" is not one of {", ".join(sorted(_DATE_FORMATS))}')
    parts = re.findall(r"\d+", text)
    if len(parts) != len(order):
        raise SsmlError(f'say-as date at {where}: "{text[:40]}" does not match format "{order}"')
    fields = dict(zip(order, (int(p) for p in parts), strict=True))
    y, m, d = fields.get("y"), fields.get("m"), fields.get("d")
    lex = lexicon(lang)
    if m is not None and not 1 <= m <= 12 or d is not None and not 1 <= d <= 31:
        raise SsmlError(f'say-as date at {where}: "{text[:40]}" is not a date')
    if m is not None and d is not None:
        return say_date(y, m, d, lex)
    if m is not None:
        return lex.months[m - 1] + (f" {year(y, lang)}" if y is not None else "")
    if d is not None:
        return lex.say_ordinal(d)
    assert y is not None
    return year(y, lang)


def _time(text: str, lang: str, fmt: str | None, where: str) -> str:
    m = _TIME.match(text)
    hour, minute = (int(m.group(1)), int(m.group(2) or 0)) if m else (-1, -1)
    if not m or hour > 23 or minute > 59:
        raise SsmlError(f'say-as time at {where}: "{text[:40]}" is not a time of day')
    meridiem = m.group(3).replace(".", "").lower() if m.group(3) else None
    return say_time(hour, minute, meridiem, lexicon(lang))


READERS: Final[dict[str, Callable[[str, str, str | None, str], str]]] = {
    "characters": _characters,
    "spell-out": _characters,
    "cardinal": _cardinal,
    "number": _cardinal,
    "ordinal": _ordinal,
    "digits": _digits,
    "date": _date,
    "time": _time,
    "telephone": _telephone,
}
"""``interpret-as`` values and their readers (``spell-out`` and ``number`` are the names
Polly and Azure also accept)."""


def say_as(text: str, interpret_as: str, fmt: str | None, lang: str, where: str) -> str:
    reader = READERS.get(interpret_as)
    if reader is None:
        raise SsmlError(
            f'say-as at {where}: interpret-as "{interpret_as[:40]}" is not supported '
            f"(use one of {', '.join(sorted(READERS))})"
        )
    return reader(text, lang, fmt, where)
