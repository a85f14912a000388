"""Numbers as words, per API language.

num2words does the heavy lifting for nine languages; Hindi comes from ``numbers_hi``. Japanese is
written in hiragana (``reading=True``) because eSpeak NG's Japanese voice reads kana only: kanji
come out as "Chinese letter". English drops the British "and" and the commas num2words puts in
("one hundred one"), which suits the en-US voice and keeps commas from becoming pauses.

Gender matters in the Romance languages when a number counts a noun (``una hora``, ``vingt et
une heures``, ``duas horas``) and Spanish shortens ``uno`` before a noun (``veintiún euros``);
callers that know the noun pass ``gender`` and ``before_noun``.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from num2words import num2words

from speech.text.numbers_hi import cardinal_hi, ordinal_hi

Gender = Literal["m", "f"]

_N2W_LANG: Final[dict[str, str]] = {"pt": "pt_BR"}

DECIMAL_WORD: Final[dict[str, str]] = {
    "en": "point",
    "es": "coma",
    "fr": "virgule",
    "pt": "vírgula",
    "de": "Komma",
    "it": "virgola",
    "nl": "komma",
    "ja": "てん",
    "ar": "فاصلة",
    "hi": "दशमलव",
}

MINUS_WORD: Final[dict[str, str]] = {
    "en": "minus",
    "es": "menos",
    "fr": "moins",
    "pt": "menos",
    "de": "minus",
    "it": "meno",
    "nl": "min",
    "ja": "マイナス",
    "ar": "سالب",
    "hi": "ऋण",
}

# Languages whose short decimal fractions are read as a number ("tres coma catorce").
_FRACTION_AS_NUMBER: Final[frozenset[str]] = frozenset({"es", "fr", "pt", "it", "nl"})

# Beyond this many digits a number is read digit by digit (ids, card numbers, serials).
MAX_CARDINAL_DIGITS: Final = 15

_ROMAN: Final = re.compile(r"M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")
_ROMAN_VALUES: Final[dict[str, int]] = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}

_ES_APOCOPE = re.compile(r"\b(\w*?)uno(?= (?:mil|mill|bill)\w*\b)")
_ES_FINAL_UNO = re.compile(r"uno$")


def _n2w(n: int, lang: str, **kwargs: object) -> str:
    return str(num2words(n, lang=_N2W_LANG.get(lang, lang), **kwargs))


def _es_uno(word: str) -> str:
    return "veintiún" if word == "veintiuno" else word[:-3] + "un"


def _feminine(words: str, lang: str) -> str:
    if lang == "es":
        words = re.sub(r"uno\b", "una", words)
        return re.sub(r"ientos\b", "ientas", words)
    if lang == "pt":
        words = re.sub(r"\bum\b", "uma", words)
        words = re.sub(r"\bdois\b", "duas", words)
        return re.sub(r"entos\b", "entas", words)
    if lang == "fr":
        return re.sub(r"\bun\b", "une", words)
    if lang == "it":
        return re.sub(r"uno\b", "una", words)
    return words


def cardinal(n: int, lang: str, *, gender: Gender = "m", before_noun: bool = False) -> str:
    """``21`` -> ``twenty-one``; ``(21, "es", before_noun=True)`` -> ``veintiún``."""
    if abs(n) >= 10**MAX_CARDINAL_DIGITS:
        return (MINUS_WORD[lang] + " " if n < 0 else "") + digits(str(abs(n)), lang)
    if lang == "hi":
        return cardinal_hi(n)
    if lang == "ja":
        return _n2w(n, lang, reading=True)
    words = _n2w(n, lang)
    if lang == "en":
        return words.replace(",", "").replace(" and ", " ")
    if lang == "ar":
        return words.replace("و ", "و").replace("  ", " ")
    if lang == "es":
        words = _ES_APOCOPE.sub(lambda m: _es_uno(m.group(1) + "uno"), words)
    if gender == "f":
        return _feminine(words, lang)
    if before_noun:
        if lang == "es" and words.endswith("uno"):
            last = words.rsplit(" ", 1)
            last[-1] = _es_uno(last[-1])
            return " ".join(last)
        if lang == "it" and words.endswith("uno"):
            return words[:-1]
        if lang == "de" and words == "eins":
            return "ein"
    return words


def ordinal(n: int, lang: str, *, gender: Gender = "m") -> str:
    """``21`` -> ``twenty-first``; ``(1, "fr", gender="f")`` -> ``première``."""
    if abs(n) >= 10**MAX_CARDINAL_DIGITS:
        return cardinal(n, lang)
    if lang == "hi":
        return ordinal_hi(n)
    if lang == "ja":
        return _n2w(n, lang, to="ordinal", reading=True)
    if lang == "ar" and n > 10:
        # num2words' Arabic "ordinal" above ten is a feminine cardinal; say "number N" instead.
        return "رقم " + cardinal(n, lang)
    words = _n2w(n, lang, to="ordinal")
    if lang == "en":
        return words.replace(",", "").replace(" and ", " ")
    if gender == "f":
        if lang in ("es", "pt", "it"):
            return re.sub(r"o\b", "a", words)
        if lang == "fr" and words == "premier":
            return "première"
    return words


def year(n: int, lang: str) -> str:
    """A year as people say it: ``1999`` -> ``nineteen ninety-nine``, ``2005`` -> ``two thousand five``."""
    if lang == "hi" and 1100 <= n <= 1999 and n % 100:
        return f"{cardinal_hi(n // 100)} सौ {cardinal_hi(n % 100)}"  # "unnīs sau ninyānbe"
    if lang in ("hi", "ja", "ar") or n <= 0:
        return cardinal(n, lang)
    words = _n2w(n, lang, to="year")
    if lang == "en":
        return words.replace(",", "").replace(" and ", " ").replace("oh-", "oh ")
    return words


def digits(text: str, lang: str) -> str:
    """Each digit as a word: ``"4821"`` -> ``four eight two one``. Non-digits are dropped."""
    return " ".join(cardinal(int(ch), lang) for ch in text if ch.isdigit())


def integer(text: str, lang: str, *, gender: Gender = "m", before_noun: bool = False) -> str:
    """A digit string as a number, or digit by digit when it is an id rather than a quantity
    (a leading zero, as in ``007``, or more than ``MAX_CARDINAL_DIGITS`` digits)."""
    if (len(text) > 1 and text.startswith("0")) or len(text) > MAX_CARDINAL_DIGITS:
        return digits(text, lang)
    return cardinal(int(text), lang, gender=gender, before_noun=before_noun)


def decimal(whole: str, fraction: str, lang: str, *, gender: Gender = "m") -> str:
    """``("3", "14")`` -> ``three point one four`` (en) / ``tres coma catorce`` (es).

    English, German, Arabic, Hindi and Japanese read the fraction digit by digit; the Romance
    languages and Dutch say a one- or two-digit fraction without a leading zero as a number,
    which is how people read prices and measurements aloud there.
    """
    head = integer(whole or "0", lang, gender=gender)
    if lang in _FRACTION_AS_NUMBER and len(fraction) <= 2 and not fraction.startswith("0"):
        tail = cardinal(int(fraction), lang)
    else:
        tail = digits(fraction, lang)
    return f"{head} {DECIMAL_WORD[lang]} {tail}"


def roman_value(numeral: str) -> int | None:
    """``"XIV"`` -> 14; ``None`` for anything that is not a well-formed Roman numeral."""
    if not numeral or not _ROMAN.fullmatch(numeral):
        return None
    total = 0
    for i, ch in enumerate(numeral):
        value = _ROMAN_VALUES[ch]
        nxt = _ROMAN_VALUES[numeral[i + 1]] if i + 1 < len(numeral) else 0
        total += -value if value < nxt else value
    return total
