"""Whisper tiny.en (offline) must understand what lector says: the text goes through the same
front-end and engine the service uses, and the transcript is scored by word error rate."""

from __future__ import annotations

import numpy as np
import pytest

from speech.synthesizer import Controls, Synthesizer, prepare
from tests.support.asr import transcribe, wer

pytestmark = pytest.mark.slow

THREE_SENTENCES = (
    "The quick brown fox jumps over the lazy dog. "
    "My sister works at the library on the other side of town. "
    "Please call me tomorrow morning before the meeting starts."
)


def _speak(engine, text: str) -> tuple[np.ndarray, int]:  # type: ignore[no-untyped-def]
    synthesizer = Synthesizer(lambda voice: engine)
    voice = type("Voice", (), {"key": "joe"})()
    chunks = synthesizer.synthesize(voice, prepare(text, "en"), Controls())
    gap = np.zeros(int(0.3 * chunks[0].sample_rate), dtype=np.float32)
    audio = np.concatenate([part for chunk in chunks for part in (chunk.samples, gap)])
    return audio, chunks[0].sample_rate


def test_three_sentences_are_understood(vits_engine) -> None:  # type: ignore[no-untyped-def]
    audio, rate = _speak(vits_engine, THREE_SENTENCES)
    heard = transcribe(audio, rate)
    assert wer(THREE_SENTENCES, heard) <= 0.15, heard


def test_silence_is_not_understood_as_the_text(vits_engine) -> None:  # type: ignore[no-untyped-def]
    """The check can fail: noise in place of speech scores far above the threshold."""
    rng = np.random.default_rng(0)
    noise = (rng.standard_normal(22050 * 4) * 0.05).astype(np.float32)
    assert wer(THREE_SENTENCES, transcribe(noise, 22050)) > 0.5


# Thirty sentences full of what a text front-end must get right: numbers, ordinals, dates,
# money, times, percentages, phone numbers, units and abbreviations.
HARD_SET = [
    "The meeting is on March 3rd, 2025 at 4:30 pm.",
    "Dr. Smith paid $45.99 for the book.",
    "The temperature dropped to 12 degrees overnight.",
    "About 75% of the voters agreed with the plan.",
    "Call me at 555-0142 after lunch.",
    "Mr. Brown lives at 221 Baker Street.",
    "The train leaves at 7:15 am from platform 9.",
    "She finished 2nd in the race of 300 runners.",
    "The company earned $3.5 million last year.",
    "We walked 5 km before breakfast.",
    "The package weighs 2.5 kg in total.",
    "Chapter 4 begins on page 127.",
    "The invoice was dated 01/15/2024.",
    "Mrs. Jones bought 3 apples and 12 pears.",
    "The year 1999 was a strange one.",
    "He was born on July 4th, 1980.",
    "The store opens at 9 am on Mondays.",
    "Tickets cost €20 each for adults.",
    "The population grew by 1,200 people.",
    "Turn left after 200 meters.",
    "The 21st century has only begun.",
    "Only 1 in 10 people noticed the change.",
    "Her flight lands at 11:45 tonight.",
    "The recipe needs 250 grams of flour.",
    "Prof. Lee will speak at 10 am.",
    "The score was 3 to 1 at half time.",
    "Rent rose by 8% this spring.",
    "We met on the 5th of May.",
    "The bill came to $120 exactly.",
    "The speed limit here is 60 mph.",
]


@pytest.mark.slow
def test_thirty_hard_sentences_wer_at_most_ten_percent(vits_engine) -> None:  # type: ignore[no-untyped-def]
    synthesizer = Synthesizer(lambda voice: vits_engine)
    voice = type("Voice", (), {"key": "joe"})()
    references, hypotheses = [], []
    for sentence in HARD_SET:
        chunk = synthesizer.synthesize(voice, prepare(sentence, "en"), Controls())
        audio = np.concatenate([c.samples for c in chunk])
        hypotheses.append(transcribe(audio, chunk[0].sample_rate))
        references.append(sentence)
    score = wer(" ".join(references), " ".join(hypotheses))
    assert score <= 0.10, list(zip(references, hypotheses, strict=True))
