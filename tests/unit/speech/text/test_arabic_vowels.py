"""Arabic short vowels before eSpeak NG: the real bundled diacritizer, and the merge rules."""

from __future__ import annotations

import unicodedata

import pytest

from speech.text.arabic_vowels import (
    MODEL,
    SHADDA,
    ArabicVowels,
    bare,
    connected,
    for_espeak,
    has_harakat,
    merge,
    pausal,
    shadda_first,
    vowelize,
)
from speech.text.phonemize import default_phonemizer


def test_unvowelled_words_get_their_vowels_and_keep_their_letters() -> None:
    written = "ذهبت إلى السوق صباحا"
    vowelled = ArabicVowels()(written)  # the diacritizer's own output (vowelize then readies it)
    assert bare(vowelled) == written
    assert all(has_harakat(word) for word in vowelled.split()), vowelled
    assert vowelled.startswith("ذَهَبْ"), vowelled


def test_the_authors_vowels_win() -> None:
    """A word with any haraka is kept as written, even where the model would vowel it otherwise."""
    written = "ذهبت إلى السُّوق"
    out = vowelize(written)
    assert out.split()[2] == shadda_first("السُّوق")  # the author's marks, shadda first for eSpeak
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


def test_shadda_comes_before_its_vowel() -> None:
    """NFC puts fatha, damma and kasra before shadda; eSpeak NG needs shadda first."""
    nfc = unicodedata.normalize("NFC", "الشَّمْسُ السُّكَّر")
    assert nfc.index("\u064e") < nfc.index(SHADDA)  # canonical order: the vowel first
    out = shadda_first(nfc)
    assert out == "الش\u0651\u064eمْسُ الس\u0651\u064fك\u0651\u064eر"
    assert bare(out) == bare(nfc)
    assert shadda_first(out) == out
    vowelled = vowelize("كانت الشمس مشرقة")
    assert all(
        vowelled[i - 1] not in "\u064b\u064c\u064d\u064e\u064f\u0650\u0652"
        for i, c in enumerate(vowelled)
        if c == SHADDA
    ), vowelled
    assert SHADDA in vowelled


def test_a_word_before_a_pause_loses_its_case_ending() -> None:
    """Waqf: no final short vowel or tanween before punctuation or the end; ta marbuta is h;
    the accusative's alif stays."""
    assert pausal("الْجُمُعَةِ") == "الْجُمُعَه"
    assert pausal("كَبِيرٌ") == "كَبِير"
    assert pausal("غَدًا") == "غَدا"
    assert pausal("الْمَاضِي") == "الْمَاضِي"
    out = for_espeak("ذَهَبَ الطُّلَّابُ إِلَى الْمَدْرَسَةِ، فِي الصَّبَاحِ.")
    assert out.split()[1].endswith("اب")  # inside: taskeen (see connected)
    assert out.split()[3] == "الْمَدْرَسَه،"  # after إِلَى too, the article as written (see for_espeak)
    assert out.endswith(shadda_first("فِي الصَّبَاح."))  # before a sun letter: the article as written


def test_the_articles_alif_is_silent_after_a_prefix() -> None:
    """بِالْقِطَارِ is bilqitˤaːri (eSpeak NG read the alif: biaːl), بِالشَّمْسِ biʃʃamsi; a long a
    before l (قَالَ, بَالِغ) is not the article."""
    assert for_espeak("بِالْقِطَارِ يَوْمَ").startswith("بِلْقِطَار ")
    assert for_espeak("بِالشَّمْسِ يَوْمَ").startswith(shadda_first("بِشَّمْس "))
    assert for_espeak("قَالَ بَالِغٌ يَوْمَ") == "قَال بَالِغ يَوْم"  # endings: taskeen, pausal


def test_words_inside_a_sentence_lose_their_case_ending() -> None:
    """Taskeen: inside the sentence no case ending is said (ta marbuta keeps its t, the
    accusative's -an before its alif stays); two-letter words keep their vowel."""
    assert connected("رِسَالَةٌ") == "رِسَالَة"
    assert connected("كُوبًا") == "كُوبًا"
    assert connected("يُسَافِرُ") == "يُسَافِر"
    assert connected("مَعَ") == "مَعَ" and connected("هُوَ") == "هُوَ"
    out = for_espeak("كَتَبَ الْوَلَدُ رِسَالَةً طَوِيلَةً لِصَدِيقِهِ.")
    assert out.split() == ["كَتَب", "الْوَلَد", "رِسَالَة", "طَوِيلَة", "لِصَدِيقِه."], out


def test_a_last_kaf_without_its_vowel_gets_a_sukun() -> None:
    """eSpeak NG reads a bare final ك as the pronoun -ka (مِعْطَفَك: miʕt̪ˈa.fakˌa): the kaf that
    lost its case vowel, before a pause or inside the sentence, is written with a sukun."""
    assert pausal("مِعْطَفَكَ") == "مِعْطَفَكْ"
    assert connected("بَيْتُكَ") == "بَيْتُكْ"
    assert connected("لَكَ") == "لَكَ"  # a two-letter word keeps its vowel
    assert for_espeak("فَلَا تَنْسَ مِعْطَفَكَ.") == "فَلَا تَنْس مِعْطَفَكْ."
    assert pausal("الْمَلِكُ") == "الْمَلِكْ" and pausal("كَبِيرٌ") == "كَبِير"  # other letters: no sukun


def test_espeak_reads_a_bare_final_kaf_with_a_vowel_and_a_sukun_without() -> None:
    """What the rule above rests on (eSpeak NG, every letter tried: only ك)."""
    espeak = default_phonemizer()
    assert espeak.phonemize("مِعْطَفَك.", "ar").rstrip(".").endswith("a")
    assert espeak.phonemize("مِعْطَفَكْ.", "ar").rstrip(".").endswith("k")
