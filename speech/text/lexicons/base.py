"""What the normaliser needs to know about one language, as data.

Each ``lexicons/<lang>.py`` builds one frozen ``Lexicon``; ``lexicons/__init__.py`` holds the
explicit registry. The passes in ``normalize_*.py`` are language-blind and read everything
language-specific from here, so adding a language means adding a file, not an if-chain.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from re import Match, Pattern
from typing import Final, TypeAlias

from speech.text.numbers import Gender, cardinal, ordinal

Rule: TypeAlias = tuple[Pattern[str], Callable[[Match[str]], str]]

# Names after which a Roman numeral is a regnal number ("Henry VIII", "Louis XIV"), shared by
# every Latin-script language because royal and papal names travel between them.
REGNAL_NAMES: Final[frozenset[str]] = frozenset(
    """
    Alexander Alfonso Alfred Amenhotep Antiochus Basil Benedict Carl Carlo Carlos Catherine
    Catalina Charles Christian Clement Constantine Cyrus Darius David Edmund Edward Elizabeth
    Enrico Enrique Felipe Ferdinand Fernando Francis François Franz Frederick Friedrich George
    Georg Gregory Gustav Gustaf Haakon Harald Harold Heinrich Henri Henrique Henry Innocent Isabel
    Isabella Ivan James Jacques Joan Johann John João Juan Justinian Karl Leo Leopold Louis Ludwig
    Luigi Luis Luís Malcolm Manuel Maria Mary Maximilian Napoleon Nicholas Olaf Otto Paul Pedro
    Peter Philip Philippe Pius Ptolemy Rama Ramesses Richard Robert Rudolf Sancho Stephen
    Thutmose Umberto Urban Victor Vittorio Wilhelm Willem William Xerxes
    """.split()
)


@dataclass(frozen=True, slots=True)
class Unit:
    singular: str
    plural: str
    gender: Gender = "m"


@dataclass(frozen=True, slots=True)
class Currency:
    singular: str
    plural: str
    minor_singular: str | None = None
    minor_plural: str | None = None
    gender: Gender = "m"
    minor_gender: Gender = "m"


@dataclass(frozen=True, slots=True)
class DateStyle:
    """How a numeric date is said: ``template`` takes ``{day}``, ``{month}`` and ``{year}``."""

    template: str
    template_no_year: str
    day_ordinal: bool = False
    first_day: str | None = None  # the word for the 1st when days are otherwise cardinal
    day_first: bool = True  # how 01/02/2026 is read
    day_word: Callable[[int], str] | None = None  # irregular day names (Japanese 1日 ついたち)


@dataclass(frozen=True, slots=True)
class TimeStyle:
    """How ``14:30`` is said: templates take ``{h}`` and ``{m}``."""

    template: str
    on_the_hour: str
    hour_gender: Gender = "m"
    custom: Callable[[int, int, str | None], str] | None = None
    """Replaces the templates entirely: (hour, minute, "am"/"pm"/None) -> words (English)."""


def _default_regnal(lang: str) -> Callable[[int], str]:
    return lambda n: cardinal(n, lang)


def _default_fraction(lang: str, over: str) -> Callable[[int, int], str]:
    return lambda num, den: f"{cardinal(num, lang)} {over} {cardinal(den, lang)}"


@dataclass(frozen=True, slots=True)
class Lexicon:
    lang: str
    decimal_comma: bool
    """True where ``,`` is the decimal separator and ``.``/spaces group thousands."""
    percent: str
    range_word: str
    currency_joiner: str
    """Between the major and minor amounts, spaces included: ``five dollars* and *twenty cents``
    (Arabic attaches its ``و`` to the next word, so spacing is the lexicon's choice)."""
    and_word: str
    """Between a whole number and a fraction, spaces included: ``one* and *a half``."""
    months: tuple[str, ...]
    date: DateStyle
    time: TimeStyle
    abbreviations: Mapping[str, str] = field(default_factory=dict)
    """Exact spelling (with its dot) -> expansion; matched case-sensitively as a whole token."""
    may_end_sentence: frozenset[str] = frozenset()
    """Abbreviations whose dot also ends the sentence when the next word starts a new one."""
    units: Mapping[str, Unit] = field(default_factory=dict)
    currencies: Mapping[str, Currency] = field(default_factory=dict)
    symbols: Mapping[str, str] = field(default_factory=dict)
    web: Mapping[str, str] = field(default_factory=dict)
    """Words for ``. @ / : - _ + www`` when reading URLs and e-mail addresses."""
    letters: Mapping[str, str] = field(default_factory=dict)
    """Letter names for spelling; letters not listed are written as themselves."""
    letter_separator: str = " "
    chapter_words: frozenset[str] = frozenset()
    """Words after which a Roman numeral is a plain number ("Chapter IV" -> four)."""
    regnal_names: frozenset[str] = REGNAL_NAMES
    regnal: Callable[[int], str] | None = None
    fraction: Callable[[int, int], str] | None = None
    ordinal_suffixes: Mapping[str, Gender] = field(default_factory=dict)
    """Written ordinal suffixes after digits (``st``, ``º``, ``ª``, ``er``) -> grammatical gender."""
    plural_from_two: bool = False
    """French: 1,5 kilomètre is singular; everywhere else only exactly 1 is."""
    latin_script: bool = True
    rules: tuple[Rule, ...] = ()
    """Language-specific rewrites run before the shared passes (``St.`` as Saint or Street)."""

    def say_regnal(self, n: int) -> str:
        return (self.regnal or _default_regnal(self.lang))(n)

    def say_fraction(self, num: int, den: int) -> str:
        return (self.fraction or _default_fraction(self.lang, self.web.get("/", "/")))(num, den)

    def say_ordinal(self, n: int, gender: Gender = "m") -> str:
        return ordinal(n, self.lang, gender=gender)
