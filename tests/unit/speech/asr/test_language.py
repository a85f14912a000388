"""Which transcripts are the recogniser's translation or romanisation (``speech.asr.language``),
or a loop (``speech.asr.recognizer.loops``), and the recogniser decoding them again
(``speech.asr.recognizer.hear``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from bench.intelligibility import SETS
from speech.asr.language import PROMPTS, in_language, romanised_hindi
from speech.asr.recognizer import NO_REPEAT_TOKENS, hear, loops
from tests.support.asr_multilingual import LANGUAGES, sentences


def test_a_transcript_with_latin_or_cyrillic_words_is_not_hindi() -> None:
    """Whisper base wrote a Hindi sentence partly in Latin letters, and a word with Cyrillic ones."""
    assert not in_language("Krippya Ghar سے نکلنے سے پہلے کھڑکی بند کر دیجیے", "hi")
    assert not in_language("اس نے مسкуرا کر اپنی پرانی سہیلی کو گلے لگایا", "hi")
    assert not in_language("هل تعرف متى يفتح the museum", "ar")
    assert in_language("اس نے مسکرا کر اپنی پرانی سہیلی کو گلے لگایا", "hi")
    assert in_language("東京都に住んでいます。", "ja")


def test_a_translation_into_english_is_not_the_language() -> None:
    assert not in_language("Today it is very hot, so we will stay at home.", "hi")
    assert not in_language("My neighbour cycles to work in the city every morning.", "nl")
    assert not in_language("The children ate fresh fruit after playing in the park.", "es")
    assert not in_language("It is raining, so we are staying at home.", "ja")


def test_an_english_reading_of_german_is_not_german() -> None:
    """An English reading of the sounds with few of the short English words is told apart by the
    word lists; a German transcript with heard-wrong words is still German."""
    assert not in_language("Voiced here the next up or take a better.", "de")
    assert in_language("Der Himmel war grau und dess Rohr nachschne", "de")
    assert in_language("La oubliée ne sont pas à pluie dans le train hier soir.", "fr")


def test_every_sentence_of_both_sets_and_every_prompt_is_in_its_language() -> None:
    for source in SETS.values():
        for sentence in sentences(source=source):
            for rendering in sentence.renderings:
                assert in_language(rendering, sentence.lang), rendering
    assert set(PROMPTS) == set(LANGUAGES)
    for lang, prompt in PROMPTS.items():
        assert in_language(prompt, lang), prompt


def test_romanised_hindi_is_told_from_english_and_mixed_scripts() -> None:
    assert romanised_hindi("krypya darwaza dhire se bhandkijiye")
    assert romanised_hindi("Kripya darvaaza dheere se band keejiye.")
    assert not romanised_hindi("Please close the door slowly.")
    assert not romanised_hindi("Krippya Ghar سے نکلنے سے پہلے کھڑکی بند کر دیجیے")  # mixed: decoded again
    assert not romanised_hindi("کرپیا دروازہ دھیرے سے بند کیجیے")


@dataclass
class _Segment:
    text: str


class ScriptedModel:
    """Stands in for a faster-whisper model whose readings are set in advance: Whisper writes a
    translation or a romanisation only now and then, on audio no test can make it choose, so the
    rule that follows one (decode again with the prompt, keep what is in the language) is tested
    on readings Whisper base gave (the real model is heard in ``tests/integration``)."""

    def __init__(self, *readings: str) -> None:
        self.readings = list(readings)
        self.prompts: list[str | None] = []
        self.no_repeat: list[object] = []

    def transcribe(self, audio: np.ndarray, **options: object) -> tuple[list[_Segment], None]:
        assert options["language"] and options["task"] == "transcribe"
        prompt = options["initial_prompt"]
        assert prompt is None or isinstance(prompt, str)
        self.prompts.append(prompt)
        self.no_repeat.append(options.get("no_repeat_ngram_size", 0))
        return [_Segment(self.readings.pop(0))], None


AUDIO = np.zeros(16000, dtype=np.float32)


def test_a_reading_in_the_language_is_decoded_once() -> None:
    model = ScriptedModel("کرپیا دروازہ دھیرے سے بند کیجیے")
    assert hear(model, AUDIO, "hi", 1) == "کرپیا دروازہ دھیرے سے بند کیجیے"
    assert model.prompts == [None]


@pytest.mark.parametrize(
    ("lang", "first", "second"),
    [
        ("hi", "Please close the door slowly.", "کرپیا دروازہ دھیرے سے بند کیجیے"),
        ("es", "The children ate fresh fruit after playing in the park.", "Los niños comieron fruta fresca."),
    ],
)
def test_a_translation_is_decoded_again_with_the_languages_prompt(lang: str, first: str, second: str) -> None:
    model = ScriptedModel(first, second)
    assert hear(model, AUDIO, lang, 1) == second
    assert model.prompts == [None, PROMPTS[lang]]


def test_the_first_reading_counts_when_the_second_is_no_better() -> None:
    """A voice the recogniser cannot place keeps its score: the first reading is what is scored."""
    model = ScriptedModel("Please close the door slowly.", "Close the door please.")
    assert hear(model, AUDIO, "hi", 1) == "Please close the door slowly."


def test_three_of_a_word_in_a_row_is_a_loop_and_two_are_not() -> None:
    assert loops("اسمان میں بادل چھائے ہوئے تھے اور ہوا تھا تھا تھا تھا")
    assert loops("and then then then.")
    assert not loops("میری بہن کو گانا گانا بہت پسند ہے")  # the text's own "गाना गाना"
    assert not loops("ہوا تھا تھا")
    assert not loops("a b a b a b")


def test_a_reading_stuck_in_a_loop_is_decoded_again_with_repeats_forbidden() -> None:
    model = ScriptedModel("ہوا تھا تھا تھا تھا", "اور حواہ تندی تھی")
    assert hear(model, AUDIO, "hi", 1) == "اور حواہ تندی تھی"
    assert model.no_repeat == [0, NO_REPEAT_TOKENS] and model.prompts == [None, None]


def test_a_loop_after_the_prompt_is_decoded_again_with_the_prompt() -> None:
    model = ScriptedModel("The wind was cold cold cold", "ہوا تھا تھا تھا تھا", "ہوا ٹھنڈی تھی")
    assert hear(model, AUDIO, "hi", 1) == "ہوا ٹھنڈی تھی"
    assert model.prompts == [None, PROMPTS["hi"], PROMPTS["hi"]] and model.no_repeat == [0, 0, NO_REPEAT_TOKENS]


def test_a_loop_that_the_second_decoding_does_not_end_is_kept() -> None:
    model = ScriptedModel("ہوا تھا تھا تھا تھا", "ہوا تھا تھا تھا")
    assert hear(model, AUDIO, "hi", 1) == "ہوا تھا تھا تھا تھا"
