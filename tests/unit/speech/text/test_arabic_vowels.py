"""Arabic short vowels before eSpeak NG: the real bundled diacritizer, and the merge rules."""

from __future__ import annotations

import unicodedata

import pytest

from speech.text.arabic_vowels import MODEL, ArabicVowels, bare, has_harakat, merge, shadda_first, vowelize
from speech.text.phonemize import default_phonemizer


def test_unvowelled_words_get_their_vowels_and_keep_their_letters() -> None:
    written = "ذهبت إلى السوق صباحا"
    vowelled = vowelize(written)
    assert bare(vowelled) == written
    assert all(has_harakat(word) for word in vowelled.split()), vowelled
    assert vowelled.startswith("ذَهَبْ"), vowelled


def test_the_authors_vowels_win() -> None:
    """A word with any haraka is kept as written, even where the model would vowel it otherwise."""
    written = "ذهبت إلى السُّوق"
    out = vowelize(written)
    assert out.split()[2] == "السُّوق"
    assert has_harakat(out.split()[0])


def test_merge_keeps_spacing_and_refuses_changed_letters() -> None:
    assert merge("كتب  قلم", "كَتَبَ قَلَمٌ") == "كَتَبَ  قَلَمٌ"
    assert merge("كَتب قلم", "كُتُبٌ قَلَمٌ") == "كَتب قَلَمٌ"  # the author's partial vowels stay
    assert merge("كتب قلم", "كَتَبَ قَالَمٌ") == "كَتَبَ قلم"  # the model added a letter: kept as written
    assert merge("كتب قلم", "كَتَبَقَلَمٌ") == "كتب قلم"  # words merged and letters differ: as written


def test_text_without_arabic_letters_is_untouched() -> None:
    assert vowelize("Hello, 42!") == "Hello, 42!"


def test_only_models_that_ship_in_the_wheel() -> None:
    """No download at run time: a model that is not bundled is refused."""
    import text2tashkeel

    assert MODEL in text2tashkeel.BUNDLED
    with pytest.raises(ValueError, match="does not ship"):
        ArabicVowels("bilstm")


def test_shadda_comes_before_its_vowel_for_espeak() -> None:
    """NFC (and the diacritizer) writes kaf, fatha, shadda; eSpeak NG then drops the fatha
    (``sukkar`` read ``suːkːr``). Shadda first, it reads the vowel after the geminate."""
    nfc = unicodedata.normalize("NFC", "السُّكَّرِ")
    assert nfc.index("\u064e") < nfc.index("\u0651", nfc.index("ك"))  # canonical order: vowel first
    fixed = shadda_first(nfc)
    assert fixed == "الس\u0651\u064fك\u0651\u064eر\u0650"
    assert bare(fixed) == bare(nfc) and sorted(fixed) == sorted(nfc)  # the same marks, reordered
    assert shadda_first(fixed) == fixed
    assert shadda_first("ق\u0650ص\u064e\u0651ة\u064b") == "ق\u0650ص\u0651\u064eة\u064b"
    assert shadda_first("ج\u064b\u0651") == "ج\u0651\u064b"  # tanween too
    espeak = default_phonemizer()
    assert "kːr" in espeak.phonemize(nfc, "ar")  # the vowel is lost in canonical order
    assert "kːar" in espeak.phonemize(fixed, "ar")


def test_shadda_first_leaves_other_text_alone() -> None:
    assert shadda_first("Hello, 42!") == "Hello, 42!"
    assert shadda_first("كتب") == "كتب"
    assert shadda_first("\u0651ا") == "\u0651ا"  # a stray shadda with nothing before it
