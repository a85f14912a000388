"""Normalisation passes for things read as words: ``spell(...)``, e-mail addresses and URLs,
phone numbers, abbreviations, dotted initialisms, Roman numerals and symbols.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Final

from speech.text.lexicons import lexicon
from speech.text.lexicons.base import Lexicon
from speech.text.normalize_datetime import ends_sentence
from speech.text.numbers import cardinal, digits, integer, roman_value
from speech.text.offsets import Traced

# After "Henry I" these words mean the pronoun, not the numeral: "when I met Henry I was ...".
_PRONOUN_NEXT: Final = re.compile(
    r"\s+(?:am|was|have|had|will|would|shall|should|can|could|do|did|don't|think|know|said|"
    r"say|see|saw|want|love|hope|mean|guess|told|must|may|might|feel|felt|believe)\b|['’]"
)
_TLDS: Final = (
    "com|org|net|edu|gov|io|ai|co|uk|de|fr|es|it|nl|jp|in|br|pt|info|app|dev|me|tv|us|eu|ca|au|ch|be|mx|ar"
)
_SCHEME: Final = re.compile(r"^(?:https?|ftp)://", re.I)
_TRAILING_PUNCT: Final = ".,;:!?)]}'\""

_JA_LETTERS: Final[dict[str, str]] = dict(
    zip(
        "abcdefghijklmnopqrstuvwxyz",
        "エー ビー シー ディー イー エフ ジー エイチ アイ ジェー ケー エル エム エヌ オー ピー キュー アール "
        "エス ティー ユー ブイ ダブリュー エックス ワイ ゼット".split(),
        strict=True,
    )
)


@cache
def _patterns(lang: str) -> dict[str, re.Pattern[str]]:
    lex = lexicon(lang)
    abbreviations = (
        "|".join(re.escape(k) for k in sorted(_abbreviations(lang), key=len, reverse=True)) or "(?!)"
    )
    chapters = "|".join(re.escape(w) for w in sorted(lex.chapter_words, key=len, reverse=True)) or "(?!)"
    names = "|".join(sorted(lex.regnal_names, key=len, reverse=True)) or "(?!)"
    return {
        "spell": re.compile(r"\bspell\(([^()]*)\)", re.I),
        "email": re.compile(r"(?<![\w.+\-])[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+"),
        "url": re.compile(
            rf"(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>\"']+|(?<![\w@./\-])(?:[A-Za-z0-9\-]+\.)+(?:{_TLDS})"
            rf"(?:/[^\s<>\"']*)?(?![\w\-])"
        ),
        "phone": re.compile(
            r"(?<![\w+])(?:\+\d{1,3}[\s.\-]?(?:\(\d{1,4}\)|\d{1,4})(?:[\s.\-]?\d{2,4}){2,4}"
            r"|\(\d{3}\)\s?\d{3}[\s.\-]\d{4}|\d{3}[.\-]\d{3}[.\-]\d{4}"
            r"|0\d(?:[ .]\d{2}){4})(?![\w\-])"
        ),
        "abbreviation": re.compile(rf"(?<![\w.])(?:{abbreviations})(?!\w)"),
        "initialism": re.compile(r"(?<![\w.])((?:[A-Z]\.){2,})(?!\w)"),
        "chapter": re.compile(rf"(?<!\w)(?P<word>(?i:{chapters}))\s+(?P<num>[IVXLCDM]+)\b(?!['’]\w)"),
        "regnal": re.compile(rf"\b(?P<name>{names})\s+(?P<num>[IVXLCDM]+)\b(?P<dot>\.)?"),
    }


@cache
def _abbreviations(lang: str) -> dict[str, str]:
    """The lexicon's abbreviations plus sentence-initial capitals of the lower-case ones
    (``e.g.`` -> ``E.g.`` "For example"), unless the lexicon lists that spelling itself."""
    table = dict(lexicon(lang).abbreviations)
    for key, expansion in lexicon(lang).abbreviations.items():
        if key[:1].islower():
            table.setdefault(key[0].upper() + key[1:], expansion[:1].upper() + expansion[1:])
    return table


def _letter(ch: str, lex: Lexicon) -> str:
    if ch.isdigit():
        return cardinal(int(ch), lex.lang)
    if lex.lang == "ja" and ch.lower() in _JA_LETTERS:
        return _JA_LETTERS[ch.lower()]
    return lex.letters.get(ch.lower(), ch.upper() if ch.isalpha() else lex.web.get(ch, ""))


def spell(text: Traced, lex: Lexicon) -> Traced:
    """``spell(ABC)`` -> ``A, B, C`` (English) / ``A B C``: every character on its own."""

    def sub(m: re.Match[str]) -> str:
        names = [_letter(ch, lex) for ch in m.group(1) if not ch.isspace()]
        return lex.letter_separator.join(n for n in names if n)

    return text.sub(_patterns(lex.lang)["spell"], sub)


def read_address(address: str, lex: Lexicon) -> str:
    """``john.doe@example.com`` -> ``john dot doe at example dot com``."""
    words: list[str] = []
    for token in re.findall(r"[^\W\d_]+|\d+|\S", _SCHEME.sub("", address).rstrip("/")):
        if token.isdigit():
            words.append(integer(token, lex.lang) if len(token) <= 4 else digits(token, lex.lang))
        elif token.lower() == "www":
            words.append(lex.web.get("www", "www"))
        elif token[0].isalpha():
            words.append(token)
        elif token in lex.web:
            words.append(lex.web[token])
    return " ".join(words)


def web(text: Traced, lex: Lexicon) -> Traced:
    p = _patterns(lex.lang)
    text = text.sub(p["email"], lambda m: read_address(m.group(0), lex))

    def url(m: re.Match[str]) -> str:
        found = m.group(0)
        stripped = found.rstrip(_TRAILING_PUNCT)
        return read_address(stripped, lex) + found[len(stripped) :]

    return text.sub(p["url"], url)


def phones(text: Traced, lex: Lexicon) -> Traced:
    """``+1 (555) 123-4567`` -> ``plus one, five five five, one two three, four five six seven``."""

    def sub(m: re.Match[str]) -> str:
        groups = [digits(g, lex.lang) for g in re.findall(r"\d+", m.group(0))]
        head = lex.web.get("+", "+") + " " if m.group(0).startswith("+") else ""
        return head + ", ".join(groups)

    return text.sub(_patterns(lex.lang)["phone"], sub)


def rules(text: Traced, lex: Lexicon) -> Traced:
    for pattern, replace in lex.rules:
        text = text.sub(pattern, replace)
    return text


def abbreviations(text: Traced, lex: Lexicon) -> Traced:
    def sub(m: re.Match[str]) -> str:
        key = m.group(0)
        final = key in lex.may_end_sentence or key[0].lower() + key[1:] in lex.may_end_sentence
        return _abbreviations(lex.lang)[key] + ("." if final and ends_sentence(m) else "")

    return text.sub(_patterns(lex.lang)["abbreviation"], sub)


def initialisms(text: Traced, lex: Lexicon) -> Traced:
    """``U.S.A.`` -> ``U S A`` (the dot kept when it also ends the sentence)."""
    if not lex.latin_script:
        return text

    def sub(m: re.Match[str]) -> str:
        return " ".join(m.group(1).replace(".", "")) + ("." if ends_sentence(m) else "")

    return text.sub(_patterns(lex.lang)["initialism"], sub)


def roman_numerals(text: Traced, lex: Lexicon) -> Traced:
    """``Chapter IV`` -> Chapter four; ``Henry VIII`` -> Henry the eighth (per language)."""
    p = _patterns(lex.lang)

    def chapter(m: re.Match[str]) -> str:
        value = roman_value(m.group("num"))
        return m.group(0) if value is None else f"{m.group('word')} {cardinal(value, lex.lang)}"

    def regnal(m: re.Match[str]) -> str:
        value = roman_value(m.group("num"))
        if value is None or (m.group("num") == "I" and _PRONOUN_NEXT.match(m.string, m.end("num"))):
            return m.group(0)
        dot = m.group("dot") or ""
        if dot and lex.lang == "de" and not ends_sentence(m):
            dot = ""  # German writes regnal numbers as ordinals with a dot: "Ludwig XIV."
        return f"{m.group('name')} {lex.say_regnal(value)}{dot}"

    return text.sub(p["chapter"], chapter).sub(p["regnal"], regnal)


def symbols(text: Traced, lex: Lexicon) -> Traced:
    for symbol, word in lex.symbols.items():
        if symbol not in text.text:
            continue
        if symbol in "#~":
            text = text.sub(re.compile(re.escape(symbol) + r"(?=\d)"), word + " ")
        else:
            text = text.replace(symbol, f" {word} ")
    return text
