"""Hindi in either of its scripts as one sound skeleton, so a Devanagari text and the Urdu that
Whisper writes for it can be compared.

Whisper base, forced to Hindi, writes Urdu script more often than Devanagari
(``tests/support/asr_multilingual.py``); a chunk's text is Devanagari. Compared letter by letter
the two share nothing, so every Hindi chunk would fail. Both are mapped here to the same Latin
letters, keeping what both scripts write and dropping what only one does:

- Urdu leaves short vowels unwritten: Devanagari's inherent a, its short i and u (and their
  independent letters inside a word) are dropped; long vowels stay, as the letter Urdu writes for
  them (a for alif, y for the i/e of ye, w for the u/o of vav: Urdu does not tell those apart,
  nor its vav from v, nor its ye from y).
- A vowel that starts a word is an alif in Urdu, followed by its long vowel's letter.
- Sounds the two scripts spell apart but a voice says alike fold together: the Arabic letters
  of loans (s, t, z, h, q) as ``scoring._URDU_SOUND_FOLDS`` does, the nukta letters with their
  plain twins (z as j, f as ph, q as k, as a Hindi writer who drops the nukta has it), dental
  and retroflex t, d and r, anusvara, chandrabindu and every nasal as n, aspiration as h.
- A doubled consonant is one (बच्चे, بچے): Urdu's shadda is seldom written.
- A word's last h is dropped: Urdu ends many words in a he that is a vowel (کہ for कि, جملہ).

A skeleton, not a transliteration: a word spelled by ear can still differ in a letter or two (an
initial short vowel Urdu writes as alif, a vowel ending Urdu writes with he), so Hindi's
character error rate on clean speech runs above a same-script comparison's; Hindi takes the
default threshold (``scoring.DEFAULT_THRESHOLD``) until ``bench/qa.py`` says otherwise.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

_VIRAMA: Final = "\u094d"
_NUKTA: Final = "\u093c"

# Devanagari consonants (nukta letters are decomposed by NFD into consonant + nukta).
_DEVANAGARI_CONSONANTS: Final = {
    "क": "k", "ख": "kh", "ग": "g", "घ": "gh", "ङ": "n",
    "च": "ch", "छ": "chh", "ज": "j", "झ": "jh", "ञ": "n",
    "ट": "t", "ठ": "th", "ड": "d", "ढ": "dh", "ण": "n",
    "त": "t", "थ": "th", "द": "d", "ध": "dh", "न": "n",
    "प": "p", "फ": "ph", "ब": "b", "भ": "bh", "म": "m",
    "य": "y", "र": "r", "ल": "l", "व": "w", "श": "sh", "ष": "sh", "स": "s", "ह": "h", "ळ": "l",
}  # fmt: skip
_NUKTA_CONSONANTS: Final = {
    "ड": "r",
    "ढ": "rh",
}  # ड़ ढ़ are flaps, Urdu's ڑ; the others keep their twin's sound
_DEVANAGARI_SIGNS: Final = {
    "ा": "a", "ी": "y", "े": "y", "ै": "y", "ू": "w", "ो": "w", "ौ": "w", "ृ": "r",
    "ि": "", "ु": "", "ॅ": "", "ॉ": "", "ं": "n", "ँ": "n", "ः": "h",
}  # fmt: skip
# Independent vowels: at a word's start Urdu writes alif and the vowel's letter; inside a word
# (after another vowel) a hamza seat Urdu's side drops, and the vowel's letter.
_DEVANAGARI_VOWELS: Final = {
    "अ": "", "आ": "a", "इ": "", "ई": "y", "उ": "", "ऊ": "w", "ए": "y", "ऐ": "y", "ओ": "w", "औ": "w",
    "ऋ": "r", "ऑ": "",
}  # fmt: skip
_URDU: Final = {
    "ا": "a", "آ": "a", "أ": "a", "إ": "a", "ٱ": "a", "ب": "b", "پ": "p", "ت": "t", "ٹ": "t", "ث": "s",
    "ج": "j", "چ": "ch", "ح": "h", "خ": "kh", "د": "d", "ڈ": "d", "ذ": "j", "ر": "r", "ڑ": "r",
    "ز": "j", "ژ": "j", "س": "s", "ش": "sh", "ص": "s", "ض": "j", "ط": "t", "ظ": "j", "ع": "",
    "غ": "g", "ف": "ph", "ق": "k", "ک": "k", "ك": "k", "گ": "g", "ل": "l", "م": "m", "ن": "n",
    "ں": "n", "و": "w", "ؤ": "w", "ہ": "h", "ۂ": "h", "ھ": "h", "ه": "h", "ة": "h", "ۃ": "h",
    "ی": "y", "ي": "y", "ى": "y", "ے": "y", "ۓ": "y", "ئ": "", "ء": "",
}  # fmt: skip


def _devanagari_word(word: str) -> str:
    out: list[str] = []
    letters = unicodedata.normalize("NFD", word)
    for k, ch in enumerate(letters):
        if ch in _DEVANAGARI_CONSONANTS:
            nukta = k + 1 < len(letters) and letters[k + 1] == _NUKTA
            sound = (
                _NUKTA_CONSONANTS.get(ch, _DEVANAGARI_CONSONANTS[ch]) if nukta else _DEVANAGARI_CONSONANTS[ch]
            )
            if k >= 2 and letters[k - 1] == _VIRAMA and sound in (out[-1], out[-1] + "h"):
                out.pop()  # a doubled consonant (बच्चे, अच्छा): Urdu writes it once
            out.append(sound)
        elif ch in _DEVANAGARI_SIGNS:
            out.append(_DEVANAGARI_SIGNS[ch])
        elif ch in _DEVANAGARI_VOWELS:
            out.append(("a" if k == 0 and ch != "आ" else "") + _DEVANAGARI_VOWELS[ch])
        elif ch.isdigit() or (ch.isalpha() and not unicodedata.name(ch, "").startswith("DEVANAGARI")):
            out.append(ch)
    return "".join(out)


def _urdu_word(word: str) -> str:
    # The glide before a final ye-barree is spelled with a hamza seat or a plain ye, and Whisper
    # base writes both (چاہئے / چاہیے, لئے / لیے); Devanagari writes the one vowel letter (चाहिए).
    word = word.replace("یے", "ئے")
    return "".join(_URDU.get(ch, ch if ch.isdigit() or ch.isascii() and ch.isalpha() else "") for ch in word)


def skeleton(text: str) -> str:
    """``text`` (Devanagari or Urdu, punctuation and all) as lower-case Latin sound letters,
    words separated by single spaces."""
    out = []
    for word in unicodedata.normalize("NFKC", text).casefold().split():
        devanagari = sum("\u0900" <= ch <= "\u097f" for ch in word)
        arabic = sum("\u0600" <= ch <= "\u06ff" for ch in word)
        sounds = _devanagari_word(word) if devanagari >= arabic else _urdu_word(word)
        if len(sounds) > 1 and sounds.endswith("h"):
            sounds = sounds[:-1]  # Urdu's word-final he is often a vowel (کہ, جملہ): dropped on both sides
        if sounds:
            out.append(sounds)
    return " ".join(out)


# --- the consonant skeleton, for Hindi written in Latin letters -------------------------------
#
# Whisper base, forced to Hindi, now and then writes a sentence it understood in Latin letters,
# as Hindi is romanised in chat ("krypya darwaza dhire se bhandkijiye" for कृपया दरवाज़ा धीरे से
# बंद कीजिए). Romanisation has no fixed spelling of vowels, glides, aspiration or the nasal vowel
# (dhire / dheere, kijiye / keejiye, bhand for बंद), so :func:`consonants` keeps only what every
# spelling writes: the consonants, folded further than :func:`skeleton` folds them.

_LATIN_UNITS: Final = re.compile(r"c?chh?|[kgjtdpbsr]h|.")
# A consonant sound (a unit of the Latin letters above, or one of this module's letters) as the
# skeleton's letter: aspiration dropped, c for ch, s for sh, the nukta letters as their twins,
# the flaps ड़ and ढ़ as d, as romanised Hindi mostly spells them (ladka, padhte; Urdu's way,
# larka, parhte, costs a letter), and the letters that romanisation uses for vowels and glides (y, w, v: kripya / krypya, o / w)
# dropped with the vowels.
_CONSONANT_FOLDS: Final = {
    "kh": "k", "gh": "g", "ch": "c", "chh": "c", "jh": "j", "th": "t", "dh": "d", "ph": "p",
    "bh": "b", "sh": "s", "rh": "r", "cch": "c", "cchh": "c", "c": "k", "cc": "k", "q": "k", "z": "j", "f": "p", "x": "ks",
    "a": "", "e": "", "i": "", "o": "", "u": "", "y": "", "w": "", "v": "",
}  # fmt: skip


def _fold(sound: str) -> str:
    return _CONSONANT_FOLDS.get(sound, sound)


def _latin_consonants(word: str) -> str:
    units = [_fold(unit) for unit in _LATIN_UNITS.findall(word) if unit.isalpha()]
    # m before a labial is how romanisation writes the anusvara there (hamesha, but ambar / anbar)
    return "".join(
        "n" if unit == "m" and k + 1 < len(units) and units[k + 1][:1] in ("p", "b") else unit
        for k, unit in enumerate(units)
    )


def _devanagari_consonants(word: str) -> str:
    out: list[str] = []
    for ch in unicodedata.normalize("NFD", word):  # the nukta dropped: ड़ ढ़ as d, ज़ as j
        if ch in _DEVANAGARI_CONSONANTS:
            out.append(_fold(_DEVANAGARI_CONSONANTS[ch]))
        elif ch in ("ृ", "ऋ"):
            out.append("r")
        elif ch in ("ं", "ँ"):
            out.append("n")
        elif ch == "ः":
            out.append("h")
        elif ch.isascii() and ch.isalpha():
            out.append(ch)
    return "".join(out)


def _urdu_consonants(word: str) -> str:
    # ھ (do chashmi he) writes aspiration after a consonant; alif, vav and ye are vowels or
    # glides; a word's last he is mostly a vowel (دروازہ, کہ), as in :func:`skeleton`
    if len(word) > 1 and word[-1] in "ہۂهۃة":
        word = word[:-1]
    return "".join(
        "" if ch == "ھ" else _fold(_URDU.get(ch, ch if ch.isascii() and ch.isalpha() else "")) for ch in word
    )


def consonants(text: str) -> str:
    """``text`` (Devanagari, Urdu or romanised Hindi) as its consonants alone, one Latin letter
    each, without spaces: vowels, y, w and v, aspiration and the nukta dropped, sibilants as s,
    dental and retroflex alike, ड़ and ढ़ as r, every nasal sign as n, a doubled consonant once.
    Coarser than :func:`skeleton`: the comparison for a transcript in Latin letters, where
    romanisation's free spelling of everything else would otherwise count as errors."""
    out: list[str] = []
    for word in unicodedata.normalize("NFKC", text).casefold().split():
        devanagari = sum("\u0900" <= ch <= "\u097f" for ch in word)
        arabic = sum("\u0600" <= ch <= "\u06ff" for ch in word)
        latin = sum(ch.isascii() and ch.isalpha() for ch in word)
        if devanagari >= max(arabic, latin) and devanagari:
            out.append(_devanagari_consonants(word))
        elif arabic >= latin and arabic:
            out.append(_urdu_consonants(word))
        else:
            out.append(_latin_consonants(word))
    letters = "".join(out)
    return "".join(ch for k, ch in enumerate(letters) if k == 0 or ch != letters[k - 1])
