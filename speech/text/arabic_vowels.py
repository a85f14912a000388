"""Short vowels for Arabic written without them, before eSpeak NG reads it.

Arabic is written without most of its short vowels (harakat), and eSpeak NG guesses few of
them: ``ذهبت`` comes out as ``ðhbt``, four consonants. Kokoro then speaks consonant clusters
that no Arabic speaker says, and Whisper base hears half the letters wrong. A diacritizer puts
the vowels back first (``ذَهَبْتُ``, which eSpeak reads ``ðahabtu``).

The diacritizer is ``text2tashkeel``'s ``rawi-ensemble``: a 4.9 MB int8 ONNX model inside the
wheel, run by onnxruntime (already a dependency), with no download at run time. Measured with
Whisper base on the held-out sentences (see ``tests/integration/speech/test_kokoro_intelligibility.py``)
it takes the Kokoro voices' character error rate from about 0.5 to below 0.4.

Words the author vowelled (any haraka in the word) keep the author's marks: the model predicts
from the bare letters and would overwrite them. The model never changes a letter; a word whose
letters differ anyway is kept as written.

Shadda goes before the letter's vowel (:func:`shadda_first`). Unicode's canonical order (NFC,
which the text is normalised to) puts fatha, damma and kasra before shadda, and eSpeak NG reads
a vowel mark followed by shadda as the doubled consonant *without* its vowel: ``الشَّمْسُ`` came
out ``ʔaʃʃmsu`` and ``السُّكَّرَ`` ``ʔassskːr``, a cluster where the sun letter's vowel should be,
in every word with shadda (a third of the development sentences).
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from typing import Any, Final

MODEL: Final = "rawi-ensemble"
"""text2tashkeel's flagship, one of the models whose weights ship inside the wheel."""

HARAKAT: Final = frozenset(chr(c) for c in range(0x064B, 0x0653)) | {"\u0670"}
"""Tanween, fatha, damma, kasra, shadda, sukun and the dagger alef."""


SHADDA: Final = "\u0651"
SUKUN: Final = "\u0652"
_VOWEL_THEN_SHADDA: Final = re.compile("([\u064b-\u0650\u0652]+)\u0651")


def shadda_first(text: str) -> str:
    """``text`` with each shadda moved before the vowel marks of its letter (see above): the
    order eSpeak NG reads, and the order people type."""
    return _VOWEL_THEN_SHADDA.sub(lambda m: SHADDA + m.group(1), text)


# A word before a pause (a punctuation mark or the sentence's end) and the one after it.
_LETTERS: Final = "\u0621-\u064a\u064b-\u0652\u0670\u0671"
_BEFORE_PAUSE: Final = re.compile(f'[{_LETTERS}]+(?=\\s*(?:[.!?؟،,;:؛…"»)]|$))')
_FINAL_VOWEL: Final = re.compile("[\u064b-\u0650\u0652]+$")
# bi-, wa-, fa-, ka- before the article: its alif is hamzat al-wasl, silent after a vowel, but
# eSpeak NG reads it as a long a (بِالْقِطَارِ: biaːlqitˤaːri for bilqitˤaːri; بِالشَّمْسِ:
# biaːʃʃamsi for biʃʃamsi). Before a moon letter (the lam's sukun) the alif goes; before a sun
# letter (its shadda) the lam, assimilated, goes too. A long a + l (قَالَ, بَالِغ) has neither.
_PREFIX: Final = "(?<![\\w\u064b-\u0652])([بفكو][\u064e\u0650])"
_PREFIX_ARTICLE_MOON: Final = re.compile(_PREFIX + "ا(?=ل\u0652)")
_PREFIX_ARTICLE_SUN: Final = re.compile(_PREFIX + "ال(?=[\u0621-\u064a]\u0651)")


def pausal(word: str) -> str:
    """``word`` as said before a pause (waqf): no final short vowel, tanween or sukun (the
    accusative's alif stays a long a), and ta marbuta as h. The diacritizer writes the case
    ending of every word; spoken at a pause it is a vowel no reader says, and Whisper base
    heard the sentence's last word as another one (الْجُمُعَةِ as ألجمواتي). A last kaf gets a
    sukun (:func:`_silent_kaf`)."""
    word = _silent_kaf(_FINAL_VOWEL.sub("", word))
    word = re.sub("\u064b(?=[اى]$)", "", word)
    return word[:-1] + "ه" if word.endswith("ة") else word


def _silent_kaf(word: str) -> str:
    """``word`` with a sukun on a last kaf left bare: eSpeak NG reads a bare final ك as the
    pronoun -ka (مِعْطَفَك: miʕt̪ˈa.fakˌa, heard as متوفكا), and only ك (every letter
    checked), so a word whose case ending was taken off would keep a vowel there after all."""
    return word + SUKUN if word.endswith("ك") else word


# A word followed by another word: inside the sentence.
_BEFORE_WORD: Final = re.compile(f"[{_LETTERS}]+(?=\\s+[\u0621-\u064a])")


def connected(word: str) -> str:
    """``word`` inside a sentence, read without its case ending (taskeen, as Arabic is
    commonly read aloud): no final short vowel, nor tanween on a letter; ta marbuta keeps its
    t. The diacritizer's case endings are its most frequent error (رِسَالَةٌ for رِسَالَةً,
    أُرِيدَ for أُرِيدُ), and Whisper base heard each spoken ending as a letter of its own
    (يَوْمَ as يومة, حَوْلَ as حولة, بَارِدٌ as باردون). The accusative's -an before its alif
    stays: Whisper base writes it (كُوبًا heard as كوبا, said -aː as كبى). Words of two letters
    (هُوَ, مَعَ, مِنَ, لَكَ) keep their vowel: it is part of the word, not an ending. A last kaf
    whose vowel went gets a sukun (:func:`_silent_kaf`)."""
    if sum("\u0621" <= char <= "\u064a" for char in word) <= 2 or re.search("\u064b[اى]$", word):
        return word
    return _silent_kaf(_FINAL_VOWEL.sub("", word))


def for_espeak(text: str) -> str:
    """Vowelled text as eSpeak NG should read it: shadda first, the article's alif silent
    after a prefix, the words inside the sentence without their case endings, and each word
    before a pause in its pausal form.

    The article after a word ending in a vowel is left as written (eSpeak NG reads its alif
    as a vowel): in connected speech that alif is silent (fi l-madina), but with it silent
    Whisper base joined the article to the word before (يَوْمَ الْجُمُعَةِ heard as يامل جموى)
    or, before a sun letter, wrote no article at all (شامس for الشمس); with taskeen the word
    before mostly ends in a consonant anyway."""
    text = shadda_first(text)
    text = _PREFIX_ARTICLE_SUN.sub(r"\1", _PREFIX_ARTICLE_MOON.sub(r"\1", text))
    text = _BEFORE_WORD.sub(lambda m: connected(m.group(0)), text)
    return _BEFORE_PAUSE.sub(lambda m: pausal(m.group(0)), text)


def has_harakat(text: str) -> bool:
    return any(char in HARAKAT for char in text)


def bare(text: str) -> str:
    """``text`` without harakat (NFC)."""
    return "".join(char for char in unicodedata.normalize("NFC", text) if char not in HARAKAT)


def merge(written: str, vowelled: str) -> str:
    """``vowelled``, except that words the author already vowelled, or that the model changed
    beyond adding marks, stay as written. Whitespace is the author's."""
    tokens = written.split()
    predicted = vowelled.split()
    if len(tokens) != len(predicted):
        return vowelled if bare(vowelled) == bare(written) else written
    out = []
    for token, guess in zip(tokens, predicted, strict=True):
        keep = has_harakat(token) or bare(guess) != bare(token)
        out.append(token if keep else guess)
    # the author's spacing: each token replaced in place
    result, position = [], 0
    for token, new in zip(tokens, out, strict=True):
        start = written.index(token, position)
        result.append(written[position:start])
        result.append(new)
        position = start + len(token)
    result.append(written[position:])
    return "".join(result)


class ArabicVowels:
    """A diacritizer over ``text2tashkeel`` (its ONNX session is built on first use)."""

    def __init__(self, model: str = MODEL) -> None:
        import text2tashkeel

        if model not in text2tashkeel.BUNDLED:
            raise ValueError(
                f"text2tashkeel model {model!r} does not ship in the wheel (it would be downloaded)"
            )
        self._diacritizer: Any = text2tashkeel.Diacritizer(model)
        self._lock = threading.Lock()

    def __call__(self, text: str) -> str:
        """``text`` with its missing short vowels, one sentence at a time (the model's unit)."""
        if not any("\u0621" <= char <= "\u064a" for char in text):
            return text
        with self._lock:
            vowelled = str(self._diacritizer.diacritize(text))
        return merge(text, unicodedata.normalize("NFC", vowelled))


@functools.cache
def _diacritizer() -> ArabicVowels:
    return ArabicVowels()


@functools.lru_cache(maxsize=1024)
def vowelize(text: str) -> str:
    """``ArabicVowels()(text)`` with one process-wide diacritizer, made ready for eSpeak NG
    (:func:`for_espeak`). Cached: the Kokoro front end asks for each sentence
    twice (its phonemes, then its words' phonemes)."""
    return for_espeak(_diacritizer()(text))
