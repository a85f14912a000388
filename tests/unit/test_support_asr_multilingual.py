"""The multilingual intelligibility check's scorer (``tests/support/asr_multilingual.py``): a
Hindi transcript in Latin letters compared as consonants."""

from __future__ import annotations

from speech.asr.language import romanised_hindi
from tests.support.asr_multilingual import cer

# A held-out sentence and the romanised Hindi Whisper base wrote for priya's speech of it (Zen 5,
# float32): every word understood, spelt as Hindi is spelt in chat.
DOOR = ("कृपया दरवाज़ा धीरे से बंद कीजिए।", "کرپیا دروازہ دھیرے سے بند کیجیے۔")


def test_hindi_understood_and_written_in_latin_letters_scores_as_its_consonants() -> None:
    assert romanised_hindi("krypya darwaza dhire se bhandkijiye")
    assert cer(DOOR, "krypya darwaza dhire se bhandkijiye", "hi") == 0.0
    assert cer(DOOR, "Kripya darvaaza dheere se band keejiye.", "hi") == 0.0
    assert cer(DOOR, "krypya darwaza dhire se bhandkijiye", "hi") < cer(
        DOOR, "کرپیا دروازہ دھیرے سے بند کی", "hi"
    )  # the scripts' own comparison is unchanged and may now be the worse


def test_other_words_in_latin_letters_or_an_english_translation_still_score_badly() -> None:
    assert cer(DOOR, "mera bhai har subah park mein daudne jata hai", "hi") > 0.5
    assert cer(DOOR, "karo mat yaar kal milenge", "hi") > 0.5
    assert cer(DOOR, "krypya darwaza", "hi") > 0.5  # half the sentence missing
    assert not romanised_hindi("Please close the door slowly.")
    assert cer(DOOR, "Please close the door slowly.", "hi") == 1.0
    assert not romanised_hindi("Krippya Ghar سے نکلنے سے پہلے کھڑکی بند کر دیجیے")  # mixed: decoded again


def test_romanised_scoring_is_hindi_only() -> None:
    assert cer("Bonjour tout le monde.", "bonjur tu le mond", "fr") > 0.2
