from __future__ import annotations

from speech.text import normalize
from speech.text.kana import has_kanji, to_kana


def test_kanji_become_kana_and_the_rest_stays() -> None:
    assert to_kana("東京へ行く ABC。") == "とうきょうへいく ABC。"


def test_japanese_normalisation_leaves_no_kanji() -> None:
    out = normalize("東京に3人で行きました。天気は良い。", "ja")
    assert not has_kanji(out)
    assert "とうきょう" in out


def test_other_languages_are_untouched() -> None:
    assert "東京" in normalize("東京", "en")


def test_espeak_reads_the_kana_instead_of_saying_chinese_letter() -> None:
    from speech.synthesizer import prepare
    from speech.text.phonemize import default_phonemizer

    phonemizer = default_phonemizer()
    assert "tʃˈaɪniːz" in phonemizer.phonemize("東京", "ja")  # what eSpeak does with raw kanji
    spoken = " ".join(phonemizer.phonemize(s, "ja") for s in prepare("東京に行きます。", "ja"))
    assert "tʃˈaɪniːz" not in spoken and "kʲ" in spoken


def test_kanji_are_read_also_without_normalisation() -> None:
    """noTextNormalization / reduceLatency keep digits as written, but kanji still become kana."""
    from speech.synthesizer import prepare
    from speech.text.phonemize import default_phonemizer

    sentences = prepare("東京に3人で行きます。", "ja", normalize_text=False)
    assert not any(has_kanji(s) for s in sentences) and "3" in "".join(sentences)
    spoken = " ".join(default_phonemizer().phonemize(s, "ja") for s in sentences)
    assert "tʃˈaɪniːz" not in spoken
    assert prepare("Keep 3 as written.", "en", normalize_text=False) == ["Keep 3 as written."]
