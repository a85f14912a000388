"""German text normalisation data.

German writes ordinals as a number with a dot (``3. Mai``, ``der 2. Weltkrieg``) and inflects
them: the rules below pick the ending from the word before (``am 3. Mai`` -> ``am dritten Mai``).
"""

from __future__ import annotations

import re
from re import Match

from speech.text.lexicons.base import Currency, DateStyle, Lexicon, TimeStyle, Unit
from speech.text.numbers import cardinal, ordinal, year

LANG = "de"
MONTHS = tuple("Januar Februar März April Mai Juni Juli August September Oktober November Dezember".split())
_DATIVE = {"am", "im", "vom", "zum", "beim", "dem", "den", "des", "zur", "seit dem", "bis zum", "ab dem"}
_NOMINATIVE_ARTICLE = {"der", "die", "das"}


def _inflected(n: int, before: str | None, default: str) -> str:
    stem = ordinal(n, LANG)  # "dritte"
    if before and before.lower() in _DATIVE:
        return stem + "n"
    if before and before.lower() in _NOMINATIVE_ARTICLE:
        return stem
    return stem + default


def fraction(num: int, den: int) -> str:
    """``1/2`` ein halb, ``3/4`` drei Viertel, ``5/8`` fünf Achtel."""
    head = "ein" if num == 1 else cardinal(num, LANG)
    if den == 2:
        return f"{head} halb"
    name = ordinal(den, LANG)
    return f"{head} {name[0].upper()}{name[1:]}l"


_PREP = r"(?:(?P<before>(?i:am|im|vom|zum|beim|dem|den|des|zur|der|die|das|seit dem|bis zum|ab dem)) )?"
_MONTH_ALT = "|".join(MONTHS)


def _numeric_date(m: Match[str]) -> str:
    day, month = int(m.group("d")), int(m.group("m"))
    if not (1 <= day <= 31 and 1 <= month <= 12):
        return m.group(0)
    before = m.group("before")
    words = f"{_inflected(day, before, 'r')} {MONTHS[month - 1]}"
    if m.group("y"):
        words += " " + year(int(m.group("y")), LANG)
    return (before + " " if before else "") + words


def _named_date(m: Match[str]) -> str:
    before = m.group("before")
    words = f"{_inflected(int(m.group('d')), before, 'r')} {m.group('month')}"
    return (before + " " if before else "") + words


def _ordinal_before_noun(m: Match[str]) -> str:
    before = m.group("before")
    return (before + " " if before else "") + _inflected(int(m.group("n")), before, "") + " "


def _clock(m: Match[str]) -> str:
    """``14:30 Uhr`` vierzehn Uhr dreißig; ``1:00 Uhr`` ein Uhr."""
    hour, minute = int(m.group(1)), int(m.group(2) or 0)
    if hour > 24 or minute > 59:
        return m.group(0)
    words = ("ein" if hour == 1 else cardinal(hour, LANG)) + " Uhr"
    return words + (" " + cardinal(minute, LANG) if minute else "")


LEXICON = Lexicon(
    lang=LANG,
    decimal_comma=True,
    percent="Prozent",
    range_word="bis",
    currency_joiner=" und ",
    and_word=" und ",
    months=MONTHS,
    date=DateStyle(template="{day}r {month} {year}", template_no_year="{day}r {month}", day_ordinal=True),
    time=TimeStyle(template="{h} Uhr {m}", on_the_hour="{h} Uhr", hour_gender="f"),
    abbreviations={
        "Hr.": "Herr",
        "Hrn.": "Herrn",
        "Fr.": "Frau",
        "Dr.": "Doktor",
        "Prof.": "Professor",
        "z. B.": "zum Beispiel",
        "z.B.": "zum Beispiel",
        "usw.": "und so weiter",
        "bzw.": "beziehungsweise",
        "d. h.": "das heißt",
        "d.h.": "das heißt",
        "ca.": "circa",
        "Nr.": "Nummer",
        "Str.": "Straße",
        "u. a.": "unter anderem",
        "u.a.": "unter anderem",
        "evtl.": "eventuell",
        "ggf.": "gegebenenfalls",
        "inkl.": "inklusive",
        "vgl.": "vergleiche",
        "St.": "Sankt",
        "Tel.": "Telefon",
        "Bd.": "Band",
        "Kap.": "Kapitel",
        "etc.": "et cetera",
        "bspw.": "beispielsweise",
        "Mio.": "Millionen",
        "Mrd.": "Milliarden",
        "Jh.": "Jahrhundert",
        "v. Chr.": "vor Christus",
        "n. Chr.": "nach Christus",
    },
    may_end_sentence=frozenset({"usw.", "etc.", "v. Chr.", "n. Chr."}),
    units={
        "mm": Unit("Millimeter", "Millimeter"),
        "cm": Unit("Zentimeter", "Zentimeter"),
        "m": Unit("Meter", "Meter"),
        "km": Unit("Kilometer", "Kilometer"),
        "mg": Unit("Milligramm", "Milligramm"),
        "g": Unit("Gramm", "Gramm"),
        "kg": Unit("Kilogramm", "Kilogramm"),
        "ml": Unit("Milliliter", "Milliliter"),
        "l": Unit("Liter", "Liter"),
        "L": Unit("Liter", "Liter"),
        "km/h": Unit("Kilometer pro Stunde", "Kilometer pro Stunde"),
        "m/s": Unit("Meter pro Sekunde", "Meter pro Sekunde"),
        "°C": Unit("Grad Celsius", "Grad Celsius"),
        "ºC": Unit("Grad Celsius", "Grad Celsius"),
        "°F": Unit("Grad Fahrenheit", "Grad Fahrenheit"),
        "°": Unit("Grad", "Grad"),
        "h": Unit("Stunde", "Stunden", "f"),
        "Std.": Unit("Stunde", "Stunden", "f"),
        "min": Unit("Minute", "Minuten", "f"),
        "Min.": Unit("Minute", "Minuten", "f"),
        "s": Unit("Sekunde", "Sekunden", "f"),
        "GB": Unit("Gigabyte", "Gigabyte"),
        "MB": Unit("Megabyte", "Megabyte"),
        "kWh": Unit("Kilowattstunde", "Kilowattstunden", "f"),
        "m²": Unit("Quadratmeter", "Quadratmeter"),
        "ha": Unit("Hektar", "Hektar"),
    },
    currencies={
        "€": Currency("Euro", "Euro", "Cent", "Cent"),
        "EUR": Currency("Euro", "Euro", "Cent", "Cent"),
        "$": Currency("Dollar", "Dollar", "Cent", "Cent"),
        "USD": Currency("Dollar", "Dollar", "Cent", "Cent"),
        "£": Currency("Pfund", "Pfund", "Penny", "Pence"),
        "¥": Currency("Yen", "Yen"),
        "CHF": Currency("Franken", "Franken", "Rappen", "Rappen"),
        "₹": Currency("Rupie", "Rupien", gender="f"),
    },
    symbols={"&": "und", "+": "plus", "=": "gleich", "×": "mal", "#": "Nummer", "@": "at", "~": "etwa"},
    web={
        ".": "Punkt",
        "@": "at",
        "/": "Schrägstrich",
        ":": "Doppelpunkt",
        "-": "Bindestrich",
        "_": "Unterstrich",
        "+": "plus",
        "www": "w w w",
    },
    chapter_words=frozenset("kapitel teil buch band akt szene abschnitt artikel".split()),
    regnal=lambda n: "der " + ordinal(n, LANG).capitalize(),
    fraction=fraction,
    rules=(
        (re.compile(r"(?<![\d:.])(\d{1,2})(?::(\d{2}))?\s?Uhr\b"), _clock),
        (
            re.compile(
                rf"(?<![\w.]){_PREP}(?P<d>\d{{1,2}})\.\s?(?P<m>\d{{1,2}})\.(?:\s?(?P<y>\d{{4}}))?(?![\d.]\d)"
            ),
            _numeric_date,
        ),
        (re.compile(rf"(?<![\w.]){_PREP}(?P<d>\d{{1,2}})\.\s(?P<month>{_MONTH_ALT})\b"), _named_date),
        (re.compile(rf"(?<![\w.]){_PREP}(?P<n>\d{{1,3}})\.\s(?=[A-ZÄÖÜ][a-zäöüß])"), _ordinal_before_noun),
    ),
)
