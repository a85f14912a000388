"""Normalisation passes for quantities: money, percentages, units, ordinals, fractions, ranges,
decades, years and plain numbers.

Each pass is ``(text, lexicon) -> text``; patterns are compiled once per language on first use.
A number token follows the language's separators: ``1,234.5`` in English, ``1.234,5`` (and
``1 234,5`` in French) elsewhere; an English-style ``3.14`` is still a decimal everywhere
because a group after a dot that is not three digits long cannot be a thousands group.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Final

from speech.text.lexicons import lexicon
from speech.text.lexicons.base import Currency, Lexicon
from speech.text.numbers import MINUS_WORD, Gender, cardinal, decimal, integer, year
from speech.text.offsets import Traced

_SPACES = "\u00a0\u202f"
_EN_NUMBER: Final = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)|\d+\.\d+|\d+"

# English magnitude words after an amount: "$5 million", "$2.5bn", "€300k".
_EN_SCALES: Final[dict[str, str]] = {
    "thousand": "thousand",
    "million": "million",
    "billion": "billion",
    "trillion": "trillion",
    "k": "thousand",
    "K": "thousand",
    "m": "million",
    "M": "million",
    "mn": "million",
    "bn": "billion",
    "B": "billion",
    "tn": "trillion",
}

# "un millón *de* euros", "deux millions *d'*euros", "due milioni *di* euro".
_MILLION_OF: Final[dict[str, tuple[re.Pattern[str], str]]] = {
    "es": (re.compile(r"(?:millón|millones|billón|billones)$"), "de"),
    "pt": (re.compile(r"(?:milhão|milhões|bilhão|bilhões)$"), "de"),
    "fr": (re.compile(r"(?:millions?|milliards?)$"), "de"),
    "it": (re.compile(r"(?:milioni|miliardi|milione|miliardo)$"), "di"),
}

_VULGAR: Final[dict[str, str]] = {
    "½": "1/2",
    "⅓": "1/3",
    "⅔": "2/3",
    "¼": "1/4",
    "¾": "3/4",
    "⅕": "1/5",
    "⅛": "1/8",
    "⅜": "3/8",
    "⅝": "5/8",
    "⅞": "7/8",
}
_VULGAR_RE: Final = re.compile(r"(\d?)([½⅓⅔¼¾⅕⅛⅜⅝⅞])")
_EN_IDIOMS: Final[dict[str, str]] = {
    "24/7": "twenty-four seven",
    "9/11": "nine eleven",
    "50/50": "fifty fifty",
}


def number_pattern(lex: Lexicon) -> str:
    """Regex source for one number token (no sign) in ``lex``'s conventions."""
    if not lex.decimal_comma:
        return _EN_NUMBER
    group = "[." + _SPACES + (" " if lex.lang == "fr" else "") + "]"
    return rf"\d{{1,3}}(?:{group}\d{{3}})+(?:,\d+)?(?!\d)|\d+,\d+|\d+\.\d+|\d+"


def split_number(token: str, lex: Lexicon) -> tuple[str, str | None]:
    """``"1,234.50"`` -> ``("1234", "50")`` (en); ``"1.234"`` -> ``("1234", None)`` (es)."""
    if not lex.decimal_comma:
        whole, _, frac = token.partition(".")
        return whole.replace(",", ""), frac or None
    if "," in token:
        whole, frac = token.rsplit(",", 1)
    elif re.fullmatch(r"\d{1,3}(?:[. " + _SPACES + r"]\d{3})+", token):
        whole, frac = token, ""
    else:
        whole, _, frac = token.partition(".")
    return re.sub(r"[. " + _SPACES + "]", "", whole), frac or None


def say_number(token: str, lex: Lexicon, *, gender: Gender = "m", before_noun: bool = False) -> str:
    whole, frac = split_number(token, lex)
    if frac is None:
        return integer(whole, lex.lang, gender=gender, before_noun=before_noun)
    return decimal(whole, frac, lex.lang, gender=gender)


def is_singular(token: str, lex: Lexicon) -> bool:
    whole, frac = split_number(token, lex)
    if lex.plural_from_two:
        return float(f"{whole}.{frac or 0}") < 2
    return whole == "1" and frac is None


def _of(lex: Lexicon, amount: str, noun: str) -> str:
    rule = _MILLION_OF.get(lex.lang)
    if rule and rule[0].search(amount):
        word = rule[1]
        if lex.lang == "fr" and noun[:1].lower() in "aeiouyéh":
            return f"{amount} d'{noun}"
        return f"{amount} {word} {noun}"
    return f"{amount} {noun}"


def say_money(token: str, cur: Currency, lex: Lexicon, scale: str | None = None) -> str:
    """``("5.20", $)`` -> ``five dollars and twenty cents``; with a scale, ``five million dollars``."""
    if scale is not None:
        return f"{say_number(token, lex)} {scale} {cur.plural}"
    whole, frac = split_number(token, lex)
    if frac is not None and (len(frac) != 2 or cur.minor_singular is None or cur.minor_plural is None):
        return f"{decimal(whole, frac, lex.lang, gender=cur.gender)} {cur.plural}"
    major, minor = int(whole), int(frac or 0)
    parts = []
    if major or not minor:
        amount = integer(whole, lex.lang, gender=cur.gender, before_noun=True)
        parts.append(_of(lex, amount, cur.singular if major == 1 else cur.plural))
    if minor and cur.minor_singular and cur.minor_plural:
        amount = cardinal(minor, lex.lang, gender=cur.minor_gender, before_noun=True)
        parts.append(f"{amount} {cur.minor_singular if minor == 1 else cur.minor_plural}")
    return lex.currency_joiner.join(parts)


def _alternation(keys: list[str]) -> str:
    return "|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True))


@cache
def _patterns(lang: str) -> dict[str, re.Pattern[str]]:
    lex = lexicon(lang)
    num = number_pattern(lex)
    # ISO codes need word boundaries; symbols (including 円 and ر.س) do not.
    syms = _alternation([k for k in lex.currencies if not (k.isascii() and k.isalpha())])
    codes = _alternation([k for k in lex.currencies if k.isascii() and k.isalpha()]) or "(?!)"
    scales = _alternation(list(_EN_SCALES)) if lang == "en" else "(?!)"
    units = _alternation(list(lex.units)) or "(?!)"
    suffixes = _alternation(list(lex.ordinal_suffixes)) or "(?!)"
    neg = r"(?P<neg>(?<![\w\-–/])[-−](?=\d))?"
    neg_money = r"(?P<neg>(?<![\w\-–/])[-−](?=\S))?"
    return {
        "money_before": re.compile(
            rf"{neg_money}(?:(?<![\w$€£¥₹])(?P<sym>{syms})|\b(?P<code>{codes})\s?)\s?(?P<num>{num})"
            rf"(?:\s?(?P<scale>{scales})\b)?"
        ),
        "money_after": re.compile(
            rf"{neg}(?<![\d.,/])(?P<num>{num})\s?(?:(?P<sym>{syms})|(?P<code>{codes})\b)"
        ),
        "percent": re.compile(rf"{neg}(?<![\d.,/])(?P<num>{num})\s?%"),
        "unit": re.compile(rf"{neg}(?<![\d.,/])(?P<num>{num})\s?(?P<unit>{units})(?![\w²³/])"),
        "ordinal": re.compile(
            rf"(?<![\w.,])(?P<num>\d+)(?P<suf>{suffixes})(?!\w)", re.I if lang == "en" else 0
        ),
        "mixed": re.compile(r"(?<![\d/.,])(\d+)[ \u00a0](\d+)/(\d+)(?![\d/])"),
        "fraction": re.compile(r"(?<![\d/.,])(\d+)/(\d+)(?![\d/])"),
        "range": re.compile(rf"(?<![\w.,/\-–])({num})(?:-|\s?–\s?)({num})(?![\w/\-–]|[.,]\d)"),
        "decade": re.compile(r"(?<![\w'’])(['’]?)(\d{2}|\d{4})s\b"),
        "number": re.compile(rf"{neg}(?<![\d])(?P<num>{num})"),
    }


def _minus(m: re.Match[str], lex: Lexicon) -> str:
    return MINUS_WORD[lex.lang] + " " if m.group("neg") else ""


def money(text: Traced, lex: Lexicon) -> Traced:
    p = _patterns(lex.lang)

    def sub(m: re.Match[str]) -> str:
        cur = lex.currencies[m.group("sym") or m.group("code")]
        scale = _EN_SCALES.get(m.groupdict().get("scale") or "")
        return _minus(m, lex) + say_money(m.group("num"), cur, lex, scale)

    return text.sub(p["money_before"], sub).sub(p["money_after"], sub)


def percent(text: Traced, lex: Lexicon) -> Traced:
    return text.sub(
        _patterns(lex.lang)["percent"], lambda m: f"{_minus(m, lex)}{say_number(m.group('num'), lex)} {lex.percent}"
    )


def units(text: Traced, lex: Lexicon) -> Traced:
    def sub(m: re.Match[str]) -> str:
        unit = lex.units[m.group("unit")]
        token = m.group("num")
        name = unit.singular if is_singular(token, lex) else unit.plural
        amount = say_number(token, lex, gender=unit.gender, before_noun=True)
        return f"{_minus(m, lex)}{_of(lex, amount, name)}"

    return text.sub(_patterns(lex.lang)["unit"], sub)


def ordinals(text: Traced, lex: Lexicon) -> Traced:
    def sub(m: re.Match[str]) -> str:
        gender = lex.ordinal_suffixes.get(
            m.group("suf"), lex.ordinal_suffixes.get(m.group("suf").lower(), "m")
        )
        return lex.say_ordinal(int(m.group("num")), gender)

    return text.sub(_patterns(lex.lang)["ordinal"], sub)


def _fraction_words(num: int, den: int, lex: Lexicon) -> str:
    if lex.lang == "en" and f"{num}/{den}" in _EN_IDIOMS:
        return _EN_IDIOMS[f"{num}/{den}"]
    if den >= 2 and num >= 1 and den <= 100 and (num < den or den <= 4):
        return lex.say_fraction(num, den)
    over = "" if lex.lang == "en" else f" {lex.web.get('/', '/')}"
    return f"{cardinal(num, lex.lang)}{over} {cardinal(den, lex.lang)}"


def fractions(text: Traced, lex: Lexicon) -> Traced:
    p = _patterns(lex.lang)
    text = text.sub(_VULGAR_RE, lambda m: (m.group(1) + " " if m.group(1) else "") + _VULGAR[m.group(2)])

    def mixed(m: re.Match[str]) -> str:
        whole, num, den = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if not (0 < num < den <= 100):
            return m.group(0)
        part = lex.say_fraction(num, den)
        if lex.lang == "en" and num == 1:
            part = "a " + part.split(" ", 1)[1]
        return f"{cardinal(whole, lex.lang)}{lex.and_word}{part}"

    text = text.sub(p["mixed"], mixed)
    return text.sub(p["fraction"], lambda m: _fraction_words(int(m.group(1)), int(m.group(2)), lex))


def ranges(text: Traced, lex: Lexicon) -> Traced:
    return text.sub(_patterns(lex.lang)["range"], lambda m: f"{m.group(1)} {lex.range_word} {m.group(2)}")


def _plural_en(words: str) -> str:
    return words[:-1] + "ies" if words.endswith("y") else words + "s"


def decades(text: Traced, lex: Lexicon) -> Traced:
    """English only: ``1990s`` nineteen nineties, ``'80s`` eighties."""
    if lex.lang != "en":
        return text

    def sub(m: re.Match[str]) -> str:
        digits = m.group(2)
        if not digits.endswith("0") or (len(digits) == 4 and not 1000 <= int(digits) <= 2090):
            return m.group(0)
        words = year(int(digits), "en") if len(digits) == 4 else cardinal(int(digits), "en")
        return _plural_en(words)

    return text.sub(_patterns(lex.lang)["decade"], sub)


def _reads_as_year(token: str, lex: Lexicon) -> bool:
    if len(token) != 4 or not token.isdigit():
        return False
    n = int(token)
    if lex.lang == "en":
        return 1000 <= n <= 2099 and n % 1000 != 0
    return lex.lang in ("de", "nl", "hi") and 1100 <= n <= 1999


_NEXT_WORD: Final = re.compile(r"\s+([a-záéíóúàèìòùâêôãõçñ]+)\b")
# Words after a number that are not the noun it counts ("1 de mayo", "21 es").
_NOT_NOUNS: Final = frozenset(
    "de del a al y o e en que por para con da do das dos di della dello la le lo il los las es é è son sono são "
    "ou u em no na nos nas".split()
)


def _counted_noun(m: re.Match[str], lex: Lexicon) -> tuple[Gender, bool]:
    """Spanish, Portuguese and Italian agree a count with its noun ("un perro", "una casa",
    "veintiún años", "duas horas"). The noun's gender is guessed from its ending (-a/-as is
    feminine), which is right for most nouns and wrong for some (el día, il problema)."""
    if lex.lang == "de":
        # "1 Euro" -> "ein Euro": German nouns are capitalised, and only "eins" changes.
        nxt = re.match(r"\s+[A-ZÄÖÜ]", m.string[m.end() :])
        return "m", nxt is not None
    if lex.lang not in ("es", "pt", "it"):
        return "m", False
    nxt = _NEXT_WORD.match(m.string, m.end())
    if nxt is None or nxt.group(1) in _NOT_NOUNS:
        return "m", False
    word = nxt.group(1)
    return ("f" if word.endswith(("a", "as")) else "m"), True


def numbers(text: Traced, lex: Lexicon) -> Traced:
    def sub(m: re.Match[str]) -> str:
        token = m.group("num")
        if _reads_as_year(token, lex):
            words = year(int(token), lex.lang)
        else:
            gender, before_noun = _counted_noun(m, lex)
            words = say_number(token, lex, gender=gender, before_noun=before_noun)
        return _minus(m, lex) + words

    return text.sub(_patterns(lex.lang)["number"], sub)
