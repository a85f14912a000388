"""Hindi in Devanagari and in the Urdu script Whisper base writes for it, as one sound skeleton."""

from __future__ import annotations

import pytest

from speech.asr.hindustani import consonants, skeleton
from speech.asr.scoring import score, threshold

# Three sentences of our own and their Urdu spellings, as Whisper base writes Hindi speech.
HINDI = (
    "हम आधी रात तक स्टेशन पर इंतज़ार करते रहे।",
    "माँ ने रसोई में गरम चाय बनाई और सबको आवाज़ दी।",
    "बच्चे बगीचे में देर तक खेलते रहे और फिर थककर सो गए।",
)
URDU = (
    "ہم آدھی رات تک اسٹیشن پر انتظار کرتے رہے۔",
    "ماں نے رسوئی میں گرم چائے بنائی اور سب کو آواز دی۔",
    "بچے باغیچے میں دیر تک کھیلتے رہے اور پھر تھک کر سو گئے۔",
)


@pytest.mark.parametrize(
    ("hindi", "urdu"), list(zip(HINDI, URDU, strict=True)), ids=["station", "kitchen", "garden"]
)
def test_a_hindi_sentence_and_its_urdu_spelling_are_nearly_the_same_skeleton(hindi: str, urdu: str) -> None:
    assert score(hindi, urdu, "hi").rate <= 0.07
    assert skeleton(hindi).replace(" ", "").isascii()  # both sides as Latin letters


def test_spellings_urdu_drops_or_folds_are_the_same_sounds() -> None:
    assert skeleton("बच्चे अच्छा") == skeleton("بچے اچھا")  # a doubled consonant is written once in Urdu
    assert skeleton("आवाज़") == skeleton("आवाज") == skeleton("آواز")  # nukta or not, z is j
    assert skeleton("इंतज़ार") == skeleton("انتظار")  # a word-initial vowel is an alif; ظ is a z
    assert skeleton("क्योंकि") == skeleton("کیونکہ")  # Urdu's final he as a vowel


def test_a_hindi_chunk_heard_in_urdu_script_passes_and_one_missing_a_sentence_fails() -> None:
    text = " ".join(HINDI)
    clean = score(text, " ".join(URDU), "hi")
    assert clean.rate < 0.05 and clean.missing_run == 0
    assert not clean.fails(threshold("hi"))
    dropped = score(text, " ".join([URDU[0], URDU[2]]), "hi")
    assert dropped.missing_run == len(HINDI[1].split())
    assert dropped.fails(threshold("hi"))


def test_a_hindi_chunk_heard_in_devanagari_scores_as_before() -> None:
    text = " ".join(HINDI)
    assert score(text, text.replace("।", ""), "hi").rate == 0.0
    assert score(text, text.replace("गरम", "ठंडी"), "hi").rate > 0.0


def test_the_consonant_skeleton_reads_hindi_in_any_of_its_three_scripts_alike() -> None:
    """Romanised Hindi spells vowels, glides, aspiration and nasal vowels freely; the consonants
    are what every spelling writes."""
    devanagari = "कृपया दरवाज़ा धीरे से बंद कीजिए।"
    assert consonants(devanagari) == "krpdrjdrsbndkj"
    assert consonants("krypya darwaza dhire se bhandkijiye") == consonants(devanagari)
    assert consonants("Kripya darvaaza dheere se band keejiye") == consonants(devanagari)
    assert consonants("کرپیا دروازہ دھیرے سے بند کیجیے") == consonants(devanagari)
    assert consonants("बच्चे हमेशा पढ़ते") == consonants("bacche hamesha padhte") == "bchmspdt"  # ड़ ढ़ as d
    assert consonants("बहुत तुम्हारा") == consonants("bahut tumhara")  # ह after a vowel or a nasal stays
    assert consonants("मेरा भाई हर सुबह") != consonants(devanagari)
