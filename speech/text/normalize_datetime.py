"""Normalisation passes for dates and clock times.

Numeric dates need a year to be taken as dates (``11/22/2026``, ``22.11.2026``, ISO
``2026-11-22``): without one, ``3/4`` is a fraction. English reads slashed dates month first
(day first when the first number cannot be a month); every other language reads day first.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Final

from speech.text.lexicons import lexicon
from speech.text.lexicons.base import Lexicon
from speech.text.numbers import cardinal, year
from speech.text.offsets import Traced

_EN_MONTH_ABBREVIATIONS: Final = (
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Sept",
    "Oct",
    "Nov",
    "Dec",
)
_CAPITAL_NEXT: Final = re.compile(r"\s+[\"'“‘«(\[]*[A-ZÀ-ÖØ-Þ]")


def ends_sentence(m: re.Match[str]) -> bool:
    """Whether a dot at the end of ``m`` also closes its sentence: the text ends there, or the
    next word starts with a capital."""
    rest = m.string[m.end() :]
    return not rest.strip() or bool(_CAPITAL_NEXT.match(rest))


def say_date(y: int | None, month: int, day: int, lex: Lexicon) -> str:
    style = lex.date
    if style.day_word is not None:
        day_words = style.day_word(day)
    elif style.day_ordinal:
        day_words = lex.say_ordinal(day)
    elif day == 1 and style.first_day:
        day_words = style.first_day
    else:
        day_words = cardinal(day, lex.lang)
    month_name = lex.months[month - 1]
    if y is None:
        return style.template_no_year.format(day=day_words, month=month_name)
    return style.template.format(day=day_words, month=month_name, year=year(y, lex.lang))


def say_time(hour: int, minute: int, meridiem: str | None, lex: Lexicon) -> str:
    style = lex.time
    if style.custom is not None:
        return style.custom(hour, minute, meridiem)
    if meridiem is not None:
        hour = hour % 12 or 12
    h = cardinal(hour, lex.lang, gender=style.hour_gender)
    if minute == 0:
        return style.on_the_hour.format(h=h)
    return style.template.format(h=h, m=cardinal(minute, lex.lang))


@cache
def _patterns(lang: str) -> dict[str, re.Pattern[str]]:
    # Only English says a.m./p.m.; elsewhere the group can never match.
    mer = r"(?P<mer>[aApP])\.?\s?[mM]\b\.?" if lang == "en" else r"(?P<mer>(?!))"
    months = "|".join(
        sorted(
            lexicon(lang).months + (_EN_MONTH_ABBREVIATIONS if lang == "en" else ()), key=len, reverse=True
        )
    )
    return {
        "month_day": re.compile(
            rf"\b(?P<month>{months})\.?\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b(?!:)(?:,?\s+(?P<year>\d{{4}})\b)?"
        ),
        "day_month": re.compile(
            rf"(?<![\d.,])(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month>{months})\b\.?(?:,?\s+(?P<year>\d{{4}})\b)?"
        ),
        "iso": re.compile(r"(?<![\d\-/.])(\d{4})-(\d{1,2})-(\d{1,2})(?![\d\-/]|\.\d)"),
        "numeric": re.compile(r"(?<![\d\-/.])(\d{1,2})([/.\-])(\d{1,2})\2(\d{4})(?![\d\-/]|\.\d)"),
        "clock": re.compile(
            rf"(?<![\d:.,])(?P<h>\d{{1,2}}):(?P<m>\d{{2}})(?::(?P<s>\d{{2}}))?(?![\d:])(?:\s?{mer})?"
        ),
        "hour_mer": re.compile(rf"(?<![\d:.,])(?P<h>\d{{1,2}})\s?{mer}"),
    }


def _valid(month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= 31


def dates(text: Traced, lex: Lexicon) -> Traced:
    p = _patterns(lex.lang)

    def iso(m: re.Match[str]) -> str:
        y, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
        return say_date(y, month, day, lex) if _valid(month, day) else m.group(0)

    def numeric(m: re.Match[str]) -> str:
        a, b, y = int(m.group(1)), int(m.group(3)), int(m.group(4))
        day, month = (a, b) if lex.date.day_first else (b, a)
        if month > 12 and day <= 12:
            day, month = month, day
        return say_date(y, month, day, lex) if _valid(month, day) else m.group(0)

    text = text.sub(p["iso"], iso).sub(p["numeric"], numeric)
    if lex.lang == "en":
        text = text.sub(p["month_day"], lambda m: _en_month_day(m, lex, day_first=False))
        text = text.sub(p["day_month"], lambda m: _en_month_day(m, lex, day_first=True))
    return text


def _en_month_day(m: re.Match[str], lex: Lexicon, *, day_first: bool) -> str:
    """``November 22, 2026`` -> November twenty-second, twenty twenty-six;
    ``22 November`` -> the twenty-second of November."""
    day = int(m.group("day"))
    name = m.group("month")
    month = next(i for i, full in enumerate(lex.months) if full.startswith(name[:3]))
    if not _valid(month + 1, day):
        return m.group(0)
    y = m.group("year")
    if day_first:
        words = f"the {lex.say_ordinal(day)} of {lex.months[month]}"
        return words + (f", {year(int(y), lex.lang)}" if y else "")
    return say_date(int(y) if y else None, month + 1, day, lex)


def times(text: Traced, lex: Lexicon) -> Traced:
    p = _patterns(lex.lang)

    def clock(m: re.Match[str]) -> str:
        hour, minute, mer = int(m.group("h")), int(m.group("m")), m.group("mer")
        if minute > 59 or hour > (12 if mer else 24):
            return m.group(0)
        words = say_time(hour, minute, "am" if mer and mer.lower() == "a" else ("pm" if mer else None), lex)
        if m.group("s") and int(m.group("s")):
            words += f"{lex.and_word}{cardinal(int(m.group('s')), lex.lang)}"
        return words + ("." if m.group(0).endswith(".") and ends_sentence(m) else "")

    def hour_mer(m: re.Match[str]) -> str:
        hour = int(m.group("h"))
        if not 1 <= hour <= 12:
            return m.group(0)
        words = say_time(hour, 0, "am" if m.group("mer").lower() == "a" else "pm", lex)
        return words + ("." if m.group(0).endswith(".") and ends_sentence(m) else "")

    return text.sub(p["clock"], clock).sub(p["hour_mer"], hour_mer)
