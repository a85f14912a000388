import pytest

from speech.text.languages import (
    LANGUAGES,
    SUPPORTED,
    canonical,
    espeak_voice,
    is_supported,
    language,
    legacy,
)


def test_the_ten_api_languages_in_contract_order():
    assert SUPPORTED == ("en", "es", "fr", "pt", "de", "ja", "ar", "hi", "it", "nl")


@pytest.mark.parametrize(
    ("tag", "code"),
    [
        ("en", "en"),
        ("EN", "en"),
        ("eng", "en"),
        ("spa", "es"),
        ("fra", "fr"),
        ("por", "pt"),
        ("ger", "de"),
        ("deu", "de"),
        ("jpn", "ja"),
        ("ara", "ar"),
        ("hin", "hi"),
        ("ita", "it"),
        ("nld", "nl"),
        ("en-US", "en"),
        ("en_us", "en"),
        ("pt-BR", "pt"),
        ("es-419", "es"),
        ("eng-GB", "en"),
        (" fr ", "fr"),
    ],
)
def test_canonical_accepts_codes_legacy_codes_and_regions(tag, code):
    assert canonical(tag) == code
    assert is_supported(tag)


@pytest.mark.parametrize("tag", ["", "  ", "zh", "zh-CN", "english", "e", "xx-en", "fre"])
def test_canonical_answers_none_for_what_we_do_not_speak(tag):
    assert canonical(tag) is None
    assert not is_supported(tag)


def test_canonical_tolerates_non_strings():
    assert canonical(None) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("tag", "code"),
    [
        ("en", "eng"),
        ("en-US", "eng"),
        ("de", "ger"),
        ("deu", "ger"),
        ("nl", "nld"),
        ("fr", "fra"),
        ("ja", "jpn"),
    ],
)
def test_legacy_codes_for_voice_lists(tag, code):
    assert legacy(tag) == code


def test_legacy_rejects_unknown_language():
    with pytest.raises(ValueError, match="zh"):
        legacy("zh")


@pytest.mark.parametrize(
    ("tag", "voice"),
    [
        ("en", "en-us"),
        ("en-GB", "en-gb"),
        ("es", "es"),
        ("es-MX", "es-419"),
        ("fr", "fr-fr"),
        ("fr-BE", "fr-be"),
        ("pt", "pt-br"),
        ("pt-PT", "pt"),
        ("de-AT", "de"),
        ("ja", "ja"),
        ("ar", "ar"),
        ("hi", "hi"),
        ("it", "it"),
        ("nl", "nl"),
        ("eng", "en-us"),
    ],
)
def test_espeak_voice_per_language_and_region(tag, voice):
    assert espeak_voice(tag) == voice


def test_language_records_are_consistent():
    assert {lang.legacy for lang in LANGUAGES.values()} == {
        "eng",
        "spa",
        "fra",
        "por",
        "ger",
        "jpn",
        "ara",
        "hin",
        "ita",
        "nld",
    }
    assert language("deu").name == "German"
