"""How far what Whisper heard is from what a chunk should have said, and whether that is a defect.

Both sides are normalised the same way before they are compared, so that spelling choices the
ear cannot hear are not errors:

- English (word error rate): lector's own English front-end first (Whisper writes "4:30 pm", "$5",
  "km" as a person would, the reference may say "16:30"), then lower case, digits as words, no
  punctuation, a few compounds joined ("half time" / "halftime"), and a hyphenated word one word
  where the other side writes it whole ("To-morrow" / "tomorrow"), else its parts (:func:`_hyphens`).
- Every other language (character error rate; Japanese has no spaces, and a word rate punishes
  one wrong letter as hard as a missing word): NFKC, case-folded, no punctuation, symbols or
  spaces, plus per-script folds for spellings Whisper varies on (Arabic hamza seats and harakat,
  Japanese as its hiragana reading). Hindi is compared as a sound skeleton of either script
  (:mod:`speech.asr.hindustani`): Whisper base writes Hindi speech mostly in Urdu script, and
  now and then in Latin letters, which are compared as consonants (:func:`_romanised_hindi_score`).

A chunk fails on either of two rules, calibrated by ``bench/qa.py`` (English, ``joe``: no clean
chunk over a word error rate of 0.11 or with more than one word missing in a row; all 64
dropped sentences of 11 to 18 words caught):

- its error rate is over its language's threshold (garbled or mumbled speech), with at least
  ``MIN_EDITS`` edits, counting a long word one letter off as heard (``NEAR_MATCH_LETTERS``), or
- a run of consecutive reference tokens is missing from what was heard (a dropped sentence).
  A rate alone misses that: one sentence of a 600-character chunk is about an eighth of its
  words, within the noise of a clean chunk, but clean speech never loses six words in a row.

On a real book (``bench/qa_book.py``: *Pride and Prejudice*, its chapters cut by the planner)
chunks are often one line of dialogue; that is where the first two refinements and the hyphens
came from. Whisper tiny.en also sometimes stops after a chunk's first quoted sentence (the whole
chunk was spoken): ``speech.asr.listen`` then hears the sentences one by one. What remains is
Whisper's, not the voice's: homophones it spells its own way ("fortnight" as "Fortnite") and
names.

A third rule, a run of words heard as other words (three words swapped for others is a 4% word
error rate, under any usable rate), is available but off: clean ``joe`` chunks at 0.9x speed
had runs of three (homophones, run-together words), so it would cost false alarms, and the
target is under one an hour.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from num2words import num2words

from speech.asr.hindustani import consonants, skeleton
from speech.asr.language import romanised_hindi
from speech.asr.script import script

WORD_LANGS: Final = frozenset({"en"})
#: The rate rule wants at least this many edits: in a chunk of two to four words (a line of
#: dialogue) one word heard in another spelling is over any usable rate. On a novel
#: (``bench/qa_book.py``, 70 minutes of ``joe``) five of nine false alarms were one such word
#: ("Dear Lizzy!" heard as "Lizzie", "Mr. Darcy bowed." as "bow"); a garbled line loses more.
MIN_EDITS: Final = 2
#: Words this long that a single letter tells apart are one word to the ear and to the check
#: ("Bennet" / "Bennett", "acknowledgments" / "acknowledgements", "Meryton" / "Merton").
NEAR_MATCH_LETTERS: Final = 5
CHARACTER_RUN_LANGS: Final = frozenset({"ja"})  # no spaces: runs are counted in characters
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Threshold:
    """A chunk fails over ``rate``, with ``missing_run`` consecutive reference tokens unheard, or
    with ``wrong_run`` consecutive reference tokens unheard or heard as others (0: not used)."""

    rate: float
    missing_run: int
    wrong_run: int = 0


# Rates over words in English, characters elsewhere; runs in words but in Japanese (characters).
THRESHOLDS: Final[dict[str, Threshold]] = {
    "en": Threshold(rate=0.25, missing_run=6),
    "ja": Threshold(rate=0.35, missing_run=12),
}
DEFAULT_THRESHOLD: Final = Threshold(rate=0.30, missing_run=6)


def threshold(lang: str) -> Threshold:
    return THRESHOLDS.get(lang, DEFAULT_THRESHOLD)


@dataclass(frozen=True, slots=True)
class Score:
    metric: str  # "wer" or "cer"
    rate: float  # edits / reference tokens
    missing_run: int  # the longest run of consecutive reference tokens that was not heard
    reference_tokens: int
    wrong_run: int = 0  # the longest run of consecutive reference tokens not heard as written

    @property
    def edits(self) -> int:
        return round(self.rate * self.reference_tokens)

    def fails(self, limit: Threshold) -> bool:
        return (
            (self.rate > limit.rate and self.edits >= MIN_EDITS)
            or self.missing_run >= limit.missing_run
            or (limit.wrong_run > 0 and self.wrong_run >= limit.wrong_run)
        )


# --- normalisation ----------------------------------------------------------------------------

_COMPOUNDS: Final = ("half time", "sea shells", "sea shore", "a m", "p m")
# Spellings that sound the same: Whisper writes American English and picks one homophone. Folded
# on both sides, so "four" and "for" agreeing costs nothing a listener would notice.
_SPELLING: Final = (
    (re.compile(r"(?<=\w\w)our\b"), "or"),  # harbour, colour
    (re.compile(r"(?<=\w\w)tre\b"), "ter"),  # theatre, centre
    (re.compile(r"(?<=\w\w\w)is(e|ed|es|ing)\b"), r"iz\1"),  # realise, organised
)
_HOMOPHONES: Final = {"two": "to", "too": "to", "four": "for", "there": "their", "they're": "their"}
# Contractions a reader says either way, and Whisper writes as it likes ("I am" heard as "I'm":
# a cast book's QA flagged "I am sick of Mr. Bingley"). Folded on both sides into their long
# forms, then each long form into one token (``_ONE_TOKEN``): one spoken unit, one word to
# count, so "him" heard as "I'm" is one word misheard, not a word misheard and one added (a clean
# line of a novel scored 3 of 11 that way). Only contractions with one long form fold ("he's"
# may be "he is" or "he has": left as written).
# fmt: off
_CONTRACTIONS: Final = {
    "i'm": "i am", "you're": "you are", "we're": "we are",
    "i've": "i have", "you've": "you have", "we've": "we have", "they've": "they have",
    "i'll": "i will", "you'll": "you will", "he'll": "he will", "she'll": "she will", "we'll": "we will",
    "they'll": "they will", "it'll": "it will",
    "can't": "can not", "cannot": "can not", "won't": "will not", "don't": "do not", "doesn't": "does not",
    "didn't": "did not", "isn't": "is not", "aren't": "are not", "wasn't": "was not", "weren't": "were not",
    "haven't": "have not", "hasn't": "has not", "hadn't": "had not", "couldn't": "could not",
    "wouldn't": "would not", "shouldn't": "should not", "mustn't": "must not", "needn't": "need not",
    "shan't": "shall not", "let's": "let us",
}
# fmt: on
_ONE_TOKEN: Final = re.compile(
    r"\b(?:" + "|".join(sorted({re.escape(long) for long in _CONTRACTIONS.values()}, key=len, reverse=True)) + r")\b"
)
_APOSTROPHES: Final = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'", "`": "'", "\u00b4": "'"})
_CLOCK: Final = re.compile(r"\b(\d{1,2})\.(\d{2})\s*([ap]\.?m\.?)?(?=\W|$)")


def _english(text: str) -> str:
    from speech.text import normalize

    # Whisper writes clock times British style ("4.30pm"): the same time as "4:30 pm".
    text = _CLOCK.sub(lambda m: f"{m[1]}:{m[2]} {m[3] or ''}", text)
    text = normalize(text, "en").lower().replace("%", " percent").replace("&", " and ")
    # Books write the apostrophe as a typographic one (the corpus's novel: 727 of 729), Whisper as
    # "'"; the filter below kept only the latter, so "don’t" was the two words "don t" against a
    # heard "do not", and "Yes, ma’am." heard exactly scored 0.67. One apostrophe for both, and
    # one that only quotes ("'Yes,' she said") or ends a plural possessive ("the boys'") is no
    # letter of a word on either side.
    text = text.translate(_APOSTROPHES)
    text = re.sub(r"(\d),(\d{3})", r"\1\2", text)
    text = re.sub(
        r"\d+(\.\d+)?",
        lambda m: " " + num2words(float(m.group()) if "." in m.group() else int(m.group())) + " ",
        text,
    )
    # A hyphen inside a word is kept as "_" for :func:`_hyphens` to settle against the other side.
    text = re.sub(r"(?<=[a-z])-(?=[a-z])", "_", text)
    text = re.sub(r"[^a-z'_ ]+", " ", text)
    text = re.sub(r"(?<![a-z])'+|'+(?![a-z])", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    for compound in _COMPOUNDS:
        text = text.replace(compound, compound.replace(" ", ""))
    for pattern, replacement in _SPELLING:
        text = pattern.sub(replacement, text)
    text = " ".join(_CONTRACTIONS.get(word, _HOMOPHONES.get(word, word)) for word in text.split())
    return _ONE_TOKEN.sub(lambda m: m[0].replace(" ", "+"), text)


_ARABIC_FOLDS: Final = str.maketrans(
    {"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي", "ة": "ه", "ؤ": "و", "ئ": "ي", "ـ": None}
)
_DEVANAGARI_FOLDS: Final = str.maketrans({"\u093c": None, "\u0901": "\u0902"})  # nukta; chandrabindu
# Urdu spells the glide between two vowels with a hamza seat or a plain ye, and Whisper base
# varies (چاہئے / چاہیے, لئے / لیے, گۓ / گئے): one sound, as the Arabic folds have it.
_URDU_FOLDS: Final = str.maketrans(
    {"ك": "ک", "ي": "ی", "ى": "ی", "ه": "ہ", "ۀ": "ہ", "ۃ": "ہ", "ة": "ہ", "ـ": None, "ئ": "ی", "ۓ": "یے"}
)
# Urdu keeps the Arabic letters of Arabic and Persian loans, which Hindustani speaks alike: s
# (ث ص), t (ط), z (ذ ض ظ), h (ح), and q as k. Whisper spells Hindi by ear in Urdu script (سبھا
# for صبح, "subah") and the voice spoke a Devanagari text, which has no such letters: one each.
_URDU_SOUND_FOLDS: Final = str.maketrans(
    {"ث": "س", "ص": "س", "ط": "ت", "ذ": "ز", "ض": "ز", "ظ": "ز", "ح": "ہ", "ق": "ک", "ع": "ا"}
)


@functools.cache
def _kakasi() -> Any:
    import pykakasi

    return pykakasi.kakasi()  # type: ignore[no-untyped-call]  # pykakasi ships no annotations


def _hiragana(text: str) -> str:
    with _lock:  # one converter per process, not thread-safe
        return "".join(item["hira"] for item in _kakasi().convert(text))


def characters(text: str, lang: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    if lang == "ja":
        text = _hiragana(text)
    text = text.casefold()
    kept = []
    for ch in text:
        category = unicodedata.category(ch)
        if category[0] in "PSZC":
            continue
        if lang == "ar" and category == "Mn":  # harakat, shadda, sukun, dagger alef
            continue
        kept.append(ch)
    text = unicodedata.normalize("NFC", "".join(kept))
    if lang == "ar":
        text = text.translate(_ARABIC_FOLDS)
    elif lang == "hi":
        if script(text) == "arabic":  # Whisper base, forced to Hindi, mostly writes Urdu
            text = (
                "".join(ch for ch in text if unicodedata.category(ch) != "Mn")
                .translate(_URDU_FOLDS)
                .translate(_URDU_SOUND_FOLDS)
            )
        else:
            text = text.translate(_DEVANAGARI_FOLDS)
    return text


def normalise(text: str, lang: str) -> str:
    """The string that is compared: words separated by single spaces for English (a hyphenated
    word as its parts), characters without spaces elsewhere (Hindi as its sound skeleton)."""
    if lang in WORD_LANGS:
        return _english(text).replace("_", " ")
    if lang == "hi":
        return skeleton(text).replace(" ", "")
    return characters(text, lang)


def tokens(text: str, lang: str) -> list[str]:
    normalised = normalise(text, lang)
    return normalised.split() if lang in WORD_LANGS else list(normalised)


def _hyphens(words: list[str], other: list[str]) -> list[str]:
    """``words`` with each hyphenated word (``to_morrow``) as one word where the other side has
    it written as one ("tomorrow", or ``to_morrow`` too), else as its parts ("well known").
    Whisper writes a book's "To-morrow" and "to-day" as "tomorrow" and "today", and its own
    "well-known" for a text's "well known": either way one word to the ear, and two edits to a
    plain comparison, as many as a word dropped. Found on a novel (``bench/qa_book.py``)."""
    joined_other = {word.replace("_", "") for word in other}
    settled: list[str] = []
    for word in words:
        if "_" not in word:
            settled.append(word)
        elif (whole := word.replace("_", "")) in joined_other:
            settled.append(whole)
        else:
            settled.extend(part for part in word.split("_") if part)
    return settled


# --- alignment --------------------------------------------------------------------------------


def align(reference: Sequence[str], heard: Sequence[str], *, splits: bool = False) -> tuple[int, int, int]:
    """(edits, longest run of deleted reference tokens, longest run of reference tokens not
    heard as written: deleted or replaced) of a minimal Levenshtein alignment.

    Among alignments with the fewest edits, the traceback prefers a match or substitution, then
    an insertion, then a deletion, so a run of deletions is reported only where no cheaper
    reading exists. Words heard in addition neither end nor extend a run.

    With ``splits`` (words, not characters), a word heard as two that join into it, or two heard
    as one, is a match (:func:`_same_word` on the joined pair): Whisper tiny.en wrote "You write
    uncommonly fast" as "in commonly" and "By nature inoffensive" as "an offensive", the same on
    the chunk's second rendering and to Whisper base, where a listener hears the word. Found on a
    novel (``bench/qa_book.py``), the last false alarms of 70 minutes."""
    n, m = len(reference), len(heard)
    same = _same_word
    heard_pairs = [""] * 2 + [heard[j - 2] + heard[j - 1] for j in range(2, m + 1)] if splits else []
    ref_pairs = [""] * 2 + [reference[i - 2] + reference[i - 1] for i in range(2, n + 1)] if splits else []

    # A pair is a split only where neither of its words is the other side's word by itself: a word
    # and the short word beside it join into a near match of that word alone ("consequence" and
    # "I" make "consequencei", one letter off), which would hide the first word of a dropped
    # sentence ("... no consequence. I shall see her in January." with that sentence dropped).
    def split_heard(i: int, j: int) -> bool:  # reference[i - 1] heard as heard[j - 2] + heard[j - 1]
        return (
            splits
            and i >= 1
            and j >= 2
            and same(reference[i - 1], heard_pairs[j])
            and not same(reference[i - 1], heard[j - 2])
            and not same(reference[i - 1], heard[j - 1])
        )

    def split_reference(i: int, j: int) -> bool:  # reference[i - 2] + reference[i - 1] heard as heard[j - 1]
        return (
            splits
            and i >= 2
            and j >= 1
            and same(ref_pairs[i], heard[j - 1])
            and not same(reference[i - 2], heard[j - 1])
            and not same(reference[i - 1], heard[j - 1])
        )

    cost = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        cost[i][0] = i
    for j in range(m + 1):
        cost[0][j] = j
    for i in range(1, n + 1):
        row, above = cost[i], cost[i - 1]
        ref = reference[i - 1]
        for j in range(1, m + 1):
            best = min(above[j] + 1, row[j - 1] + 1, above[j - 1] + (not same(ref, heard[j - 1])))
            if splits:
                if split_heard(i, j):
                    best = min(best, above[j - 2])
                if split_reference(i, j):
                    best = min(best, cost[i - 2][j - 1])
            row[j] = best
    i, j = n, m
    deleted = wrong = longest_deleted = longest_wrong = 0
    while i or j:
        if i and j and cost[i][j] == cost[i - 1][j - 1] + (not same(reference[i - 1], heard[j - 1])):
            deleted = 0
            wrong = 0 if same(reference[i - 1], heard[j - 1]) else wrong + 1
            i, j = i - 1, j - 1
        elif split_heard(i, j) and cost[i][j] == cost[i - 1][j - 2]:
            deleted = wrong = 0
            i, j = i - 1, j - 2
        elif split_reference(i, j) and cost[i][j] == cost[i - 2][j - 1]:
            deleted = wrong = 0
            i, j = i - 2, j - 1
        elif j and cost[i][j] == cost[i][j - 1] + 1:
            j -= 1
        else:  # a reference token nobody said
            deleted, wrong, i = deleted + 1, wrong + 1, i - 1
        longest_deleted, longest_wrong = max(longest_deleted, deleted), max(longest_wrong, wrong)
    return cost[n][m], longest_deleted, longest_wrong


def words(text: str, lang: str) -> list[str]:
    """The words of a language written with spaces, each normalised as :func:`characters` (Hindi
    as its sound skeleton: :mod:`speech.asr.hindustani`)."""
    if lang == "hi":
        return skeleton(text).split()
    return [word for word in (characters(piece, lang) for piece in text.split()) if word]


def _consonant_words(text: str) -> list[str]:
    return [word for word in (consonants(piece) for piece in text.split()) if word]


def _romanised_hindi_score(reference: str, heard: str) -> Score:
    """A Hindi chunk heard as Hindi in Latin letters (``speech.asr.language.romanised_hindi``),
    compared as consonants on both sides (``speech.asr.hindustani.consonants``): romanisation
    spells vowels, glides, aspiration and nasal vowels as it likes, and the recogniser's spelling
    of what it understood is not the voice's error. The rate is over the reference's consonants,
    runs over its words; a transcript of other words still scores far over the threshold."""
    ref, hyp = list(consonants(reference)), list(consonants(heard))
    if not ref:
        return Score("cer", 0.0, 0, 0, 0)
    edits, _, _ = align(ref, hyp)
    _, run, wrong = align(_consonant_words(reference), _consonant_words(heard))
    return Score("cer", edits / len(ref), run, len(ref), wrong)


def score(reference: str, heard: str, lang: str) -> Score:
    """The chunk's error rate and longest unheard run; an empty reference scores zero.

    Outside English the rate is over characters, but runs are counted in words wherever the
    language is written with spaces (all but Japanese): a character alignment lines up stray
    letters of a dropped sentence with its neighbours' and cuts the run short (a Spanish sentence
    of 75 characters came out as a run of 16)."""
    metric = "wer" if lang in WORD_LANGS else "cer"
    if lang in WORD_LANGS:
        ref_words, heard_words = _english(reference).split(), _english(heard).split()
        ref, hyp = _hyphens(ref_words, heard_words), _hyphens(heard_words, ref_words)
    else:
        ref, hyp = tokens(reference, lang), tokens(heard, lang)
    if not ref:
        return Score(metric, 0.0, 0, 0, 0)
    edits, run, wrong = align(ref, hyp, splits=lang in WORD_LANGS)
    if lang not in WORD_LANGS and lang not in CHARACTER_RUN_LANGS:
        _, run, wrong = align(words(reference, lang), words(heard, lang))
    result = Score(metric, edits / len(ref), run, len(ref), wrong)
    if lang == "hi" and romanised_hindi(heard):
        return min(result, _romanised_hindi_score(reference, heard), key=lambda s: (s.rate, s.missing_run))
    return result


def _same_word(a: str, b: str) -> bool:
    """Equal, or both at least ``NEAR_MATCH_LETTERS`` long and one letter apart (changed, added
    or dropped): a spelling variant, not another word. Single characters (the tokens of a
    character error rate) compare exactly."""
    if a == b:
        return True
    if min(len(a), len(b)) < NEAR_MATCH_LETTERS or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long = (a, b) if len(a) < len(b) else (b, a)
    k = next((i for i, (x, y) in enumerate(zip(short, long, strict=False)) if x != y), len(short))
    return short[k:] == long[k + 1 :]
