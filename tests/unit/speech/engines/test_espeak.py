"""eSpeak NG's formant voice in each of the ten API languages: real, audible speech."""

from __future__ import annotations

import numpy as np
import pytest

from speech.engines.base import Engine
from speech.engines.espeak import VOICE_BY_LANGUAGE, EspeakEngine
from speech.errors import LanguageNotSupported
from speech.types import SynthesisOptions

SENTENCES = {
    "en": "Good morning, how are you today?",
    "es": "Buenos días, ¿cómo estás hoy?",
    "fr": "Bonjour, comment allez-vous aujourd'hui ?",
    "pt": "Bom dia, como você está hoje?",
    "de": "Guten Morgen, wie geht es dir heute?",
    "ja": "おはようございます、きょうはいいてんきですね。",
    "ar": "صَبَاحُ الْخَيْرِ، كَيْفَ حَالُكَ الْيَوْمَ؟",
    "hi": "सुप्रभात, आज आप कैसे हैं?",
    "it": "Buongiorno, come stai oggi?",
    "nl": "Goedemorgen, hoe gaat het vandaag met je?",
}


def test_ten_languages_are_covered() -> None:
    assert sorted(VOICE_BY_LANGUAGE) == sorted(SENTENCES)


@pytest.mark.parametrize("lang", sorted(SENTENCES))
def test_each_language_speaks(lang: str) -> None:
    engine = EspeakEngine.for_language(lang)
    assert isinstance(engine, Engine)
    chunk = engine.synthesize([SENTENCES[lang]])[0]
    assert chunk.sample_rate == 22050 and chunk.samples.dtype == np.float32
    rms = float(np.sqrt(np.mean(chunk.samples**2)))
    assert rms > 0.02, f"{lang}: nearly silent (rms {rms:.4f})"
    assert 0.3 <= chunk.duration <= 10.0
    # Speech has pauses and voiced stretches: the loudness varies over the chunk.
    frames = chunk.samples[: len(chunk.samples) // 441 * 441].reshape(-1, 441)
    frame_rms = np.sqrt(np.mean(frames**2, axis=1))
    assert frame_rms.max() > 4 * max(frame_rms.min(), 1e-4)
    assert chunk.words and chunk.words[-1].end == pytest.approx(chunk.duration)
    starts = [w.start for w in chunk.words]
    assert starts == sorted(starts) and all(w.start <= w.end for w in chunk.words)


def test_phonemes_and_empty_and_speed() -> None:
    engine = EspeakEngine.for_language("en-US")
    assert "ˈ" in engine.phonemize("Hello there")
    normal, empty = engine.synthesize(["This is a short test.", ""])
    assert len(empty.samples) == 0
    slow = engine.synthesize(["This is a short test."], SynthesisOptions(length_scale=2.0))[0]
    assert slow.duration > 1.5 * normal.duration


def test_unsupported_language() -> None:
    with pytest.raises(LanguageNotSupported):
        EspeakEngine.for_language("xx")


def test_arabic_without_diacritics_is_spoken_as_words() -> None:
    """Everyday Arabic is written without short vowels; eSpeak NG's Arabic rules supply them for
    common words, so every word comes out with vowels and close to its fully vowelled reading.
    (Weak spots remain: rare words and proper names can get the wrong vowels.)"""
    import difflib

    from speech.text.phonemize import default_phonemizer

    phonemizer = default_phonemizer()
    plain = phonemizer.phonemize("ذهب الولد إلى المدرسة", "ar")
    vowelled = phonemizer.phonemize("ذَهَبَ الوَلَدُ إِلَى المَدْرَسَةِ", "ar")
    words = plain.split()
    assert len(words) == 4
    assert all(any(v in word for v in "aiuː") for word in words), plain
    assert difflib.SequenceMatcher(None, plain, vowelled).ratio() > 0.8, (plain, vowelled)
