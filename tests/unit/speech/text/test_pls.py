from __future__ import annotations

import pytest

from speech.errors import LexiconError
from speech.text.markup import PauseSegment, PhonemeSegment, TextSegment, Voicing
from speech.text.pls import apply_lexicons, lexicon_matches, parse_pls
from tests.fixtures.hostile_xml import ATTACKS, Builder

HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n<lexicon version="1.0" '
        'xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="{lang}">\n')


def _pls(*lexemes: str, lang: str = "en-US") -> str:
    return HEAD.format(lang=lang) + "\n".join(lexemes) + "\n</lexicon>"


NAMES = _pls(
    "<lexeme><grapheme>Nguyen</grapheme><grapheme>Nguyễn</grapheme><phoneme>wɪn</phoneme></lexeme>",
    "<lexeme><grapheme>New York</grapheme><alias>the Big Apple</alias></lexeme>",
    "<lexeme><grapheme>read</grapheme><phoneme>ɹiːd</phoneme><phoneme prefer=\"true\">ɹɛd</phoneme></lexeme>",
    "<lexeme><grapheme>US</grapheme><alias>United States</alias></lexeme>",
    "<lexeme><grapheme>York</grapheme><alias>Yorkshire town</alias></lexeme>",
)


def _apply(text: str, *documents: str, lang: str = "en") -> list[object]:
    return list(apply_lexicons([TextSegment(text)], [parse_pls(d) for d in documents], lang))


def test_a_lexicon_is_read_with_its_language_lexemes_and_preferred_pronunciations() -> None:
    lexicon = parse_pls(NAMES)
    assert lexicon.lang == "en"
    assert [(lx.graphemes, lx.phoneme, lx.alias, lx.line) for lx in lexicon.lexemes] == [
        (("Nguyen", "Nguyễn"), "wɪn", None, 3),
        (("New York",), None, "the Big Apple", 4),
        (("read",), "ɹɛd", None, 5),
        (("US",), None, "United States", 6),
        (("York",), None, "Yorkshire town", 7),
    ]


def test_phonemes_become_phoneme_segments_that_keep_the_written_word() -> None:
    assert _apply("Mr Nguyễn and Nguyen.", NAMES) == [
        TextSegment("Mr "), PhonemeSegment("wɪn", word="Nguyễn"), TextSegment(" and "),
        PhonemeSegment("wɪn", word="Nguyen"), TextSegment("."),
    ]


def test_multi_word_graphemes_match_across_any_whitespace_and_the_longest_wins() -> None:
    assert _apply("From New\n   York to York.", NAMES) == [TextSegment("From the Big Apple to Yorkshire town.")]


def test_case_rules_a_lowercase_grapheme_matches_any_case_a_capitalised_one_only_itself() -> None:
    assert _apply("Read it.", NAMES)[0] == PhonemeSegment("ɹɛd", word="Read")
    assert _apply("READ it.", NAMES)[0] == PhonemeSegment("ɹɛd", word="READ")
    assert _apply("tell us, not the US", NAMES) == [TextSegment("tell us, not the United States")]


def test_only_whole_words_match() -> None:
    assert _apply("Reading bread is already done.", NAMES) == [TextSegment("Reading bread is already done.")]


def test_the_first_lexicon_named_wins_and_other_languages_are_left_alone() -> None:
    other = _pls("<lexeme><grapheme>Nguyen</grapheme><alias>Win</alias></lexeme>")
    assert _apply("Nguyen", other, NAMES) == [TextSegment("Win")]
    assert _apply("Nguyen", NAMES, other) == [PhonemeSegment("wɪn", word="Nguyen")]
    french = _pls("<lexeme><grapheme>Nguyen</grapheme><alias>Nouyène</alias></lexeme>", lang="fr")
    assert _apply("Nguyen", french) == [TextSegment("Nguyen")]
    switched = apply_lexicons([TextSegment("Nguyen", voicing=Voicing(lang="fr"))], [parse_pls(french)], "en")
    assert switched == [TextSegment("Nouyène", voicing=Voicing(lang="fr"))]


def test_other_segments_pass_through_and_voicing_is_kept() -> None:
    loud = Voicing(gain_db=3.0)
    segments = apply_lexicons([PauseSegment(200), TextSegment("Hi Nguyen", voicing=loud)], [parse_pls(NAMES)], "en")
    assert segments == [PauseSegment(200), TextSegment("Hi ", voicing=loud), PhonemeSegment("wɪn", "Nguyen", loud)]


def test_matches_report_what_changes() -> None:
    found = lexicon_matches("Read about New York", [parse_pls(NAMES)], "en")
    assert [(written, lexeme.phoneme or lexeme.alias) for written, lexeme in found] == [
        ("Read", "ɹɛd"), ("New York", "the Big Apple")]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("<lexicon/>", "lexicon line 1: <lexicon> needs version"),
        ('<lexicon version="1.0" xml:lang="en"/>', "needs an alphabet"),
        ('<lexicon version="1.0" alphabet="ipa"/>', "needs xml:lang"),
        ('<lexicon version="1.0" alphabet="ipa" xml:lang="tlh"/>', 'xml:lang "tlh"'),
        ('<lexicon version="1.0" alphabet="ipa" xml:lang="en" foo="1"/>', 'attribute "foo"'),
        ("<lex/>", "the root element must be <lexicon>"),
        (_pls("<lexeme><phoneme>x</phoneme></lexeme>"), "lexicon line 3: <lexeme> has no <grapheme>"),
        (_pls("<lexeme><grapheme>a</grapheme></lexeme>"), "lexicon line 3: <lexeme> has no <phoneme> or <alias>"),
        (_pls("\n\n<lexeme><grapheme> </grapheme><alias>b</alias></lexeme>"), "lexicon line 5: <grapheme> is empty"),
        (_pls("<lexeme><grapheme>a</grapheme><alias/></lexeme>"), "<alias> is empty"),
        (_pls('<lexeme><grapheme>a</grapheme><phoneme alphabet="x-sampa">a</phoneme></lexeme>'), 'alphabet "x-sampa"'),
        (_pls('<lexeme><grapheme>a</grapheme><alias prefer="yes">b</alias></lexeme>'), 'prefer must be "true" or "false"'),
        (_pls("<lexeme><alias>b</alias><grapheme>a</grapheme></lexeme>"), "must come before"),
        (_pls("<lexeme><grapheme>a<b/></grapheme><alias>b</alias></lexeme>"), "may hold only text"),
        (_pls("<word>a</word>"), "<word> is not a PLS element here"),
        (_pls("loose text"), 'text "loose text" outside a lexeme'),
        (_pls("<lexeme>"), "not well-formed XML at line 4"),
    ],
)
def test_malformed_lexicons_name_the_line_and_the_fault(document: str, message: str) -> None:
    with pytest.raises(LexiconError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_pls(document)


def test_metadata_and_examples_are_accepted() -> None:
    lexicon = parse_pls(_pls('<meta name="author" content="me"/>', "<metadata><x/></metadata>",
                             "<lexeme><grapheme>a</grapheme><alias>b</alias><example>an a</example></lexeme>"))
    assert len(lexicon.lexemes) == 1


def test_the_lexeme_cap() -> None:
    many = _pls(*["<lexeme><grapheme>a</grapheme><alias>b</alias></lexeme>"] * 4)
    with pytest.raises(LexiconError, match="more than 3 lexemes"):
        parse_pls(many, max_lexemes=3)


@pytest.mark.parametrize(("name", "build"), ATTACKS, ids=[name for name, _ in ATTACKS])
def test_hostile_lexicons_are_lexicon_errors(name: str, build: Builder) -> None:
    with pytest.raises(LexiconError, match="refused"):
        parse_pls(build("lexicon", 'version="1.0" alphabet="ipa" xml:lang="en"'))
