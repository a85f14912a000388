"""Whisper base (multilingual, offline) must understand the flagship Kokoro voices in all ten
API languages.

Each language's held-out sentences (``tests/data/intelligibility.toml``) go through the same
front-end (``prepare``), catalog voice and engine loader the service uses, at the precision the
service picks on this machine (``auto``: int8 convolutions on CPU). The transcript, with the
language forced, is scored by character error rate over the language's sentences together.
The target is at most 0.15 in every language and 0.40 for Arabic (written without its short
vowels). Measured on this machine (2 vCPUs, int8, KOKORO_ASR_VOICES=pairs), female / male:
en 0.000/0.000, es 0.042/0.028, fr 0.141/0.245, pt 0.031/0.000, de 0.046/0.061,
ja 0.037/0.025, ar 0.417/0.339, hi 0.126/0.084, it 0.040/0.008, nl 0.168/0.146.
Three voices miss the target with the five bundled packs, all trained on Japanese speech:
julien (fr, jm_kumo), sanne (nl) and layla (ar); for them the test holds the measured level
plus margin (``SHORTFALL``), so that a regression still fails it, and README says the target
is not met. The rest are held to the target itself.

What moved the three languages, tuned on development sentences of our own
(``tests/data/intelligibility_dev.toml``, 8-10 a language, not these held-out ones), kept where
the development set improved and the held-out sentences did not clearly get worse:
- Arabic: short vowels from a diacritizer (``speech/text/arabic_vowels.py``, text2tashkeel's
  bundled int8 model) before eSpeak, and the Arabic question mark and comma kept: layla
  0.475 -> 0.417, omar 0.525 -> 0.339 (development set 0.42 -> 0.37 and 0.36 -> 0.37).
- Dutch: r spoken as Kokoro's tap ɾ rather than its Spanish trill: development set 0.17 -> 0.11
  (sanne) and 0.19 -> 0.14 (bram); held-out 0.161 -> 0.168 and 0.133 -> 0.146.
Tried and not kept (development and held-out disagreed, or both got worse): dropping Arabic
case endings (pausal reading: development 0.37 -> 0.31, held-out 0.42 -> 0.49), Arabic r as
ɾ, slower speech (0.9 and 0.85; Arabic 0.9 read 0.65), other bundled blends for the three
voices, French ɛ̃ as æ̃, Dutch ij/ou as Kokoro's English diphthongs, no length marks, no
secondary stress in Arabic.
By default each language's first Kokoro voice in `coda` is checked (a female voice; the
table in the issue note covers the male ones too): ``KOKORO_ASR_VOICES=pairs`` adds the first
male voice, ``all`` checks every coda voice.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from speech.engines.registry import load_engine
from speech.synthesizer import prepare
from speech.text.languages import SUPPORTED
from speech.voices.catalog import Catalog
from tests.support.asr_multilingual import cer, sentences, transcribe

pytestmark = [pytest.mark.slow, pytest.mark.integration]

TARGET = {lang: 0.40 if lang == "ar" else 0.15 for lang in SUPPORTED}
# Voices that miss the target (see the docstring): the measured level plus margin, a
# regression guard, so README and the issue can say the target is not met for them.
SHORTFALL = {("fr", "julien"): 0.35, ("nl", "sanne"): 0.25, ("ar", "layla"): 0.55}
# With KOKORO_ASR_VOICES=all, the other coda voices of the three weak languages, which were
# never held to the target, get the same guard as their language's weak voice.
UNMEASURED = {"fr": 0.35, "nl": 0.25, "ar": 0.55}
PAIRS_MEASURED = {"fr": ("elodie", "julien"), "nl": ("sanne", "bram"), "ar": ("layla", "omar")}


def limit(lang: str, speaker: str) -> float:
    """The highest character error rate the test accepts from ``speaker`` in ``lang``."""
    if (lang, speaker) in SHORTFALL:
        return SHORTFALL[lang, speaker]
    if lang in UNMEASURED and speaker not in PAIRS_MEASURED[lang]:
        return UNMEASURED[lang]
    return TARGET[lang]


# All three held-out sentences of a language: with two, Hindi (0.125 on three) read 0.155;
# KOKORO_ASR_SENTENCES=2 is a quicker, noisier look.
SENTENCES_PER_VOICE = int(os.environ.get("KOKORO_ASR_SENTENCES", "3"))


def _voices() -> list[tuple[str, str]]:
    """(lang, speaker): per language the coda voices to check (see the module docstring)."""
    catalog = Catalog.load()
    which = os.environ.get("KOKORO_ASR_VOICES", "first")
    chosen: list[tuple[str, str]] = []
    for lang in SUPPORTED:
        lineup = [v for v in catalog.voices_of("coda", lang) if v.engine == "kokoro"]
        if which == "all":
            chosen += [(lang, v.speaker) for v in lineup]
        elif which == "pairs":
            for gender in ("Female", "Male"):
                chosen += [(lang, v.speaker) for v in lineup if v.gender == gender][:1]
        else:
            chosen.append((lang, lineup[0].speaker))
    return chosen


def _speak(engine, text: str, lang: str) -> np.ndarray:  # type: ignore[no-untyped-def]
    chunks = engine.synthesize(prepare(text, lang))
    gap = np.zeros(int(0.25 * engine.sample_rate), dtype=np.float32)
    return np.concatenate([part for chunk in chunks for part in (chunk.samples, gap)])


@pytest.mark.parametrize(("lang", "speaker"), _voices())
def test_kokoro_voice_is_understood(lang: str, speaker: str) -> None:
    voice = Catalog.load().voice("coda", speaker)
    engine = load_engine(voice, dtype="auto")
    edits = 0.0
    total = 0
    heard_all = []
    for sentence in sentences(lang)[:SENTENCES_PER_VOICE]:
        audio = _speak(engine, sentence.text, lang)
        heard = transcribe(audio, engine.sample_rate, lang)
        heard_all.append(heard)
        weight = len(sentence.text)
        edits += cer(sentence.renderings, heard, lang) * weight
        total += weight
    score = edits / total
    print(f"\nCER {lang} {speaker}: {score:.3f}")  # noqa: T201 - the table in the note comes from here
    assert score <= limit(lang, speaker), (score, heard_all)


def test_noise_is_not_understood_as_speech() -> None:
    """The check can fail: noise in place of speech scores far above every threshold."""
    rng = np.random.default_rng(0)
    noise = (rng.standard_normal(24000 * 3) * 0.05).astype(np.float32)
    sentence = sentences("es")[0]
    assert cer(sentence.renderings, transcribe(noise, 24000, "es"), "es") > 0.5
