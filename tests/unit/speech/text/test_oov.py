import pytest

from speech.errors import TextError
from speech.text.oov import oov_words


def test_english_uses_cmudict():
    text = "Hello wrld, it's Zyxwv's grumblefish and John's don't café. Hello again wrld 42!"
    assert oov_words(text, "en") == ["wrld", "Zyxwv's", "grumblefish"]


def test_english_words_in_cmudict_are_known():
    assert oov_words("The quick brown fox jumps over the lazy dog", "eng") == []


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        ("es", "la casa grande xqzt", ["xqzt"]),
        ("fr", "Bonjour l'homme qu'il d'accord maison xyzzy", ["xyzzy"]),
        ("de", "Das Haus ist schön xqz", ["xqz"]),
        ("it", "dell'anno città xqzt", ["xqzt"]),
        ("pt", "coração da casa xqzt", ["xqzt"]),
        ("nl", "het huis is mooi xqzt", ["xqzt"]),
        ("ar", "والكتاب كتاب بالمدرسة مدرسة xyz", ["xyz"]),
    ],
)
def test_word_list_languages(lang, text, expected):
    assert oov_words(text, lang) == expected


def test_japanese_reports_what_espeak_cannot_read():
    assert oov_words("東京へ行きます ABC です", "ja") == ["東京", "行", "ABC"]
    assert oov_words("ひらがなとカタカナ", "ja") == []


def test_hindi_reports_latin_script_words():
    assert oov_words("मैं Delhi जा रहा हूँ", "hi") == ["Delhi"]


def test_unknown_language_is_a_text_error():
    with pytest.raises(TextError):
        oov_words("hello", "zh")
