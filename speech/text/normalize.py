"""Text normalisation: written forms -> the words a voice should say.

``normalize(text, lang)`` runs an ordered list of passes (regex rewrites). The order is the
design: the most specific shapes go first so later, broader passes never see them half-read.
``spell(...)`` and addresses before anything touches their dots and digits; phone numbers and
dates before ranges (their hyphens are not "to"); ranges before money and units (``$10-20``
becomes ``$10 to 20``, then ``ten dollars to twenty``); abbreviations after the passes that need
their dots (``Nov. 22``), plain numbers last. Everything language-specific lives in
``speech.text.lexicons``; the passes themselves are shared.

Markup (``<200>``, ``{phonemes}``, ``[word]``) is not this module's business: parse it with
``speech.text.markup`` first and normalise only the text segments.

English is the reference (it feeds the neural voice); the other languages get the same passes
with their own words, separators and date order, which is reasonable but not exhaustive.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from speech.errors import TextError
from speech.text import normalize_datetime as dt
from speech.text import normalize_numbers as num
from speech.text import normalize_words as words
from speech.text.kana import to_kana
from speech.text.languages import canonical
from speech.text.lexicons import lexicon
from speech.text.lexicons.base import Lexicon
from speech.text.offsets import Traced

Pass = Callable[[Traced, Lexicon], Traced]

# Arabic-Indic, Eastern Arabic-Indic, Devanagari and full-width digits, and the Arabic
# decimal and thousands separators, to what the passes read.
_DIGITS: Final = str.maketrans(
    {
        **{chr(0x0660 + i): str(i) for i in range(10)},
        **{chr(0x06F0 + i): str(i) for i in range(10)},
        **{chr(0x0966 + i): str(i) for i in range(10)},
        **{chr(0xFF10 + i): str(i) for i in range(10)},
        "٫": ".",
        "٬": ",",
        "％": "%",
        "：": ":",
    }
)


_EMPHASIS: Final = re.compile(r"(?<![\w*])(\*{1,2}|_{1,2})(?=\S)(.+?)(?<=\S)\1(?![\w*])")
_TIMES: Final = re.compile(r"(?<=\d) ?\* ?(?=\d)")


def _ascii_digits(text: Traced, lex: Lexicon) -> Traced:
    return text.translate(_DIGITS)


def _markdown(text: Traced, lex: Lexicon) -> Traced:
    """``*bold*`` and ``_you_`` lose their markers (eSpeak says "asterisk"); ``3 * 4`` is times;
    any other asterisk (footnote marks) is dropped."""
    text = text.sub(_EMPHASIS, r"\2")
    if "*" in text.text:
        text = text.sub(_TIMES, f" {lex.symbols.get('×', '×')} ").replace("*", "")
    return text


PASSES: Final[tuple[tuple[str, Pass], ...]] = (
    ("digits", _ascii_digits),
    ("markdown", _markdown),
    ("spell", words.spell),
    ("web", words.web),
    ("rules", words.rules),
    ("phones", words.phones),
    ("dates", dt.dates),
    ("times", dt.times),
    ("ranges", num.ranges),
    ("money", num.money),
    ("percent", num.percent),
    ("units", num.units),
    ("ordinals", num.ordinals),
    ("roman", words.roman_numerals),
    ("abbreviations", words.abbreviations),
    ("initialisms", words.initialisms),
    ("fractions", num.fractions),
    ("decades", num.decades),
    ("symbols", words.symbols),
    ("numbers", num.numbers),
    ("kana", lambda text, lex: text.rewrite(to_kana(text.text)) if lex.lang == "ja" else text),
)

_HSPACE: Final = "[ \\t\\f\\v\\r\u00a0\u202f]"
_PARAGRAPH_BREAK: Final = re.compile(rf"{_HSPACE}*(?:\n{_HSPACE}*){{2,}}|\u2029")
_LINE_BREAK: Final = re.compile(rf"{_HSPACE}*\n{_HSPACE}*")
_SPACES: Final = re.compile(rf"{_HSPACE}+")
_SPACE_BEFORE_PUNCT: Final = re.compile(r" +([,.;:!?])(?=\s|$)")


def normalize(text: str, lang: str = "en") -> str:
    """``"Dr. Smith paid $5.20 on 11/22/2026."`` -> ``"Doctor Smith paid five dollars and twenty
    cents on November twenty-second, twenty twenty-six."``

    ``lang`` is any accepted tag (``en``, ``eng``, ``en-US``). Raises ``TextError`` for a
    language lector does not speak.
    """
    return normalize_traced(Traced.of(text), lang).text


def normalize_traced(text: Traced, lang: str = "en") -> Traced:
    """``normalize``, each character of the result knowing the span of ``text``'s source it was
    read from (``speech.text.offsets``): what word timings point at."""
    code = canonical(lang)
    if code is None:
        raise TextError(f"Language {lang} is not supported for text normalization")
    lex = lexicon(code)
    for _, apply in PASSES:
        text = apply(text, lex)
    return _tidy_whitespace(text)


def _tidy_whitespace(text: Traced) -> Traced:
    """Hard-wrapped lines become one line; paragraph breaks stay as one blank line; runs of
    spaces (including those the passes introduced) become one."""
    paragraphs: list[Traced] = []
    cursor = 0
    for m in _PARAGRAPH_BREAK.finditer(text.text):
        paragraphs.append(text.slice(cursor, m.start()))
        cursor = m.end()
    paragraphs.append(text.slice(cursor, len(text)))
    tidy = [p.sub(_LINE_BREAK, " ").sub(_SPACES, " ").sub(_SPACE_BEFORE_PUNCT, r"\1").strip() for p in paragraphs]
    kept = [p for p in tidy if p.text]
    out: list[Traced] = []
    for i, p in enumerate(kept):
        if i:
            out.append(Traced.spread("\n\n", (p.starts[0], p.starts[0])))
        out.append(p)
    return Traced.join(out)
