"""eSpeak NG phonemization as Piper voices expect it (IPA, stress, punctuation kept, NFD)."""

from __future__ import annotations

import unicodedata
from concurrent.futures import ThreadPoolExecutor

import pytest

from speech.errors import PhonemizerError
from speech.text.phonemize import EspeakPhonemizer
from speech.text.words import split_words


@pytest.fixture(scope="module")
def phonemizer() -> EspeakPhonemizer:
    return EspeakPhonemizer()


def test_english_ipa_keeps_punctuation_and_stress(phonemizer: EspeakPhonemizer) -> None:
    ipa = phonemizer.phonemize("Hello, world! How are you?", "en-us")
    assert ipa.startswith("h") and "wˈɜːld" in ipa
    assert ipa.count(",") == 1 and "!" in ipa and ipa.endswith("?")
    assert "ˈ" in ipa and ipa == unicodedata.normalize("NFD", ipa)
    assert "  " not in ipa and ipa == ipa.strip()


def test_other_languages_and_decomposed_accents(phonemizer: EspeakPhonemizer) -> None:
    pt = phonemizer.phonemize("São Paulo é ótimo.", "pt")
    assert "\u0303" in pt  # the nasal tilde as its own code point, as Piper's id map wants it
    fr = phonemizer.phonemize("Bonjour tout le monde.", "fr-fr")
    assert fr and fr != phonemizer.phonemize("Bonjour tout le monde.", "en-us")


def test_blank_text_gives_nothing(phonemizer: EspeakPhonemizer) -> None:
    assert phonemizer.phonemize("", "en-us") == ""
    assert phonemizer.phonemize("  \n ", "en-us") == ""
    assert phonemizer.phonemize_words("", "en-us") == []


def test_words_are_phonemized_one_by_one(phonemizer: EspeakPhonemizer) -> None:
    words = phonemizer.phonemize_words('I am here, "quoted" - twice.', "en-us")
    assert [w for w, _ in words] == ["I", "am", "here", "quoted", "twice"]
    assert all(ipa for _, ipa in words)
    assert dict(words)["here"] == "hˈɪɹ"
    # In running speech eSpeak NG merges "I am"; alone each word keeps its own phonemes.
    assert "aɪɐm" in phonemizer.phonemize("I am here.", "en-us")
    assert dict(words)["I"] != dict(words)["am"]


def test_split_words_trims_edge_punctuation() -> None:
    assert split_words('"Well," she said -- (twice)!') == ["Well", "she", "said", "twice"]
    assert split_words("don't stop") == ["don't", "stop"]


def test_unknown_voice_is_a_phonemizer_error(phonemizer: EspeakPhonemizer) -> None:
    with pytest.raises(PhonemizerError, match="xx-nowhere"):
        phonemizer.phonemize("hello", "xx-nowhere")


def test_concurrent_calls_give_the_same_answers(phonemizer: EspeakPhonemizer) -> None:
    texts = ["The cat sat on the mat.", "A quick brown fox!", "Numbers, commas; and colons: fine."] * 8
    expected = [phonemizer.phonemize(t, "en-us") for t in texts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda t: phonemizer.phonemize(t, "en-us"), texts))
    assert results == expected


@pytest.mark.parametrize(
    ("voice", "text", "word"),
    [
        ("en-us", "He said (quietly) that it was late.", "quietly"),
        ("en-us", "to dine there (an invitation, moreover, including the whole party) so soon", "invitation"),
        ("fr-fr", "Il est venu (avec sa sœur) hier.", "sœur"),
        ("es", "Llegó tarde (como siempre) a la cena.", "siempre"),
    ],
)
def test_text_in_brackets_is_spoken(phonemizer: EspeakPhonemizer, voice: str, text: str, word: str) -> None:
    """A book's parentheses are read: every word of a bracketed aside is in the sentence's IPA
    (they had been dropped by the clean-up of eSpeak NG's language flags)."""
    ipa = phonemizer.phonemize(text, voice)
    spoken = phonemizer.phonemize(word, voice).rstrip(".")
    assert spoken in ipa, (ipa, spoken)
    assert "(" in ipa and ")" in ipa


def test_language_flags_are_removed_and_nothing_else() -> None:
    from speech.text.phonemize import _clean

    assert _clean("ðɪs (en)wˈɜːd(fr) ɪz (en-us)hˈɪɹ") == unicodedata.normalize("NFD", "ðɪs wˈɜːd ɪz hˈɪɹ")
    assert _clean("hiː sˈɛd (kwˈaɪətli) ðæt") == unicodedata.normalize("NFD", "hiː sˈɛd (kwˈaɪətli) ðæt")
