"""The multilingual intelligibility check's language test (``tests/support/asr_multilingual.py``):
what makes ``transcribe`` decode a transcript again with the language's prompt."""

from __future__ import annotations

from bench.intelligibility import SETS
from tests.support.asr_multilingual import in_language, sentences


def test_a_transcript_with_latin_or_cyrillic_words_is_not_hindi() -> None:
    """Whisper base wrote a Hindi sentence partly in Latin letters, and a word with Cyrillic ones."""
    assert not in_language("Krippya Ghar سے نکلنے سے پہلے کھڑکی بند کر دیجیے", "hi")
    assert not in_language("اس نے مسкуرا کر اپنی پرانی سہیلی کو گلے لگایا", "hi")
    assert not in_language("هل تعرف متى يفتح the museum", "ar")
    assert in_language("اس نے مسکرا کر اپنی پرانی سہیلی کو گلے لگایا", "hi")
    assert in_language("東京都に住んでいます。", "ja")


def test_an_english_reading_of_german_is_not_german() -> None:
    """An English reading of the sounds with few of the short English words is told apart by the
    word lists; a German transcript with heard-wrong words is still German."""
    assert not in_language("Voiced here the next up or take a better.", "de")
    assert in_language("Der Himmel war grau und dess Rohr nachschne", "de")
    assert in_language("La oubliée ne sont pas à pluie dans le train hier soir.", "fr")


def test_every_sentence_of_both_sets_is_in_its_language() -> None:
    for source in SETS.values():
        for sentence in sentences(source=source):
            for rendering in sentence.renderings:
                assert in_language(rendering, sentence.lang), rendering
