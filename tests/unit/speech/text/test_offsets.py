"""The offset map: each spoken word knows the span of the submitted text it was read from."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from speech.stream_steps import steps_for_request
from speech.synthesizer import prepare, prepare_traced
from speech.text import split_sentences
from speech.text.normalize import normalize, normalize_traced
from speech.text.offsets import Traced, locate, pack, placed, spoken_words, unpack
from speech.text.words import split_words
from speech.types import WordTiming


def _read(source: str, lang: str = "en") -> list[tuple[str, str]]:
    """(spoken word, what its span says in ``source``) for the normalised ``source``."""
    traced = normalize_traced(Traced.of(source), lang)
    return [(w.word, source[w.source[0] : w.source[1]]) for w in spoken_words(traced)]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # a unit and a range: every word read from "40-60°C" points at all of it
        ("It was 40-60°C today.", [("It", "It"), ("was", "was"), ("forty", "40-60°C"), ("to", "40-60°C"),
                                   ("sixty", "40-60°C"), ("degrees", "40-60°C"), ("Celsius", "40-60°C"),
                                   ("today", "today")]),
        ("Lift 10 kg now", [("Lift", "Lift"), ("ten", "10 kg"), ("kilograms", "10 kg"), ("now", "now")]),
        # abbreviations keep their dot: "Doctor" was read from "Dr."
        ("Dr. Smith, e.g. here", [("Doctor", "Dr."), ("Smith", "Smith"), ("for", "e.g."), ("example", "e.g."),
                                  ("here", "here")]),
        # currency, with and without a scale word
        ("pay $5.20 or €300", [("pay", "pay"), ("five", "$5.20"), ("dollars", "$5.20"), ("and", "$5.20"),
                               ("twenty", "$5.20"), ("cents", "$5.20"), ("or", "or"), ("three", "€300"),
                               ("hundred", "€300"), ("euros", "€300")]),
        ("$5 million", [("five", "$5 million"), ("million", "$5 million"), ("dollars", "$5 million")]),
        # numbers, ordinals, percentages, fractions
        ("I have 3 apples", [("I", "I"), ("have", "have"), ("three", "3"), ("apples", "apples")]),
        ("the 1st and 22nd", [("the", "the"), ("first", "1st"), ("and", "and"), ("twenty-second", "22nd")]),
        ("50% off", [("fifty", "50%"), ("percent", "50%"), ("off", "off")]),
        ("½ cup", [("one", "½"), ("half", "½"), ("cup", "cup")]),
        # dates and times: a rewrite that keeps a word keeps that word's own span
        ("on 11/22/2026.", [("on", "on"), ("November", "11/22/2026"), ("twenty-second", "11/22/2026"),
                            ("twenty", "11/22/2026"), ("twenty-six", "11/22/2026")]),
        ("Chapter IV", [("Chapter", "Chapter"), ("four", "IV")]),
        ("at 10:30 a.m. sharp", [("at", "at"), ("ten", "10:30 a.m."), ("thirty", "10:30 a.m."), ("a", "10:30 a.m."),
                                 ("m", "10:30 a.m."), ("sharp", "sharp")]),
        # markdown: the words inside the markers point at themselves, not at the asterisks
        ("**bold** and *this is it*", [("bold", "bold"), ("and", "and"), ("this", "this"), ("is", "is"),
                                       ("it", "it")]),
        ("3 * 4", [("three", "3"), ("times", "*"), ("four", "4")]),
        # initialisms and addresses are one written token each
        ("the U.S.A. team", [("the", "the"), ("U", "U.S.A."), ("S", "U.S.A."), ("A", "U.S.A."), ("team", "team")]),
        # unicode (code points, an astral character among them) and untouched words
        ("Zoë’s café 𝔘𝔫𝔦 naïve", [("Zoë’s", "Zoë’s"), ("café", "café"), ("𝔘𝔫𝔦", "𝔘𝔫𝔦"), ("naïve", "naïve")]),
        # other languages' passes
        ("Es kostet 5 €.", [("Es", "Es"), ("kostet", "kostet"), ("fünf", "5 €"), ("Euro", "5 €")]),
    ],
)
def test_hard_cases_point_at_what_was_written(source: str, expected: list[tuple[str, str]]) -> None:
    lang = "de" if source.startswith("Es ") else "en"
    assert _read(source, lang) == expected


def test_repeated_words_keep_their_own_places() -> None:
    source = "the the  the"
    traced = normalize_traced(Traced.of(source))
    assert [w.source for w in spoken_words(traced)] == [(0, 3), (4, 7), (9, 12)]


def test_whitespace_runs_and_line_breaks_are_not_counted_twice() -> None:
    source = "  one \t two\nthree\n\n\nfour  "
    traced = normalize_traced(Traced.of(source))
    assert traced.text == normalize(source) == "one two three\n\nfour"
    assert [(w.word, source[w.source[0] : w.source[1]]) for w in spoken_words(traced)] == [
        ("one", "one"), ("two", "two"), ("three", "three"), ("four", "four")
    ]


def _corpus() -> list[str]:
    with open("tests/data/pride_and_prejudice.txt", encoding="utf-8") as f:
        book = f.read()[:40_000]
    with open("tests/unit/speech/text/test_normalize.py", encoding="utf-8") as f:
        cases = re.findall(r'"((?:[^"\\\n]|\\.)*)"', f.read())
    return [s.text for s in split_sentences(book)] + cases


@pytest.mark.parametrize("lang", ["en", "fr", "de"])
def test_on_a_corpus_the_text_is_unchanged_and_every_word_is_placed(lang: str) -> None:
    """The traced normaliser says exactly what the plain one says, and each spoken word's span
    is a non-empty stretch of the source, in order; a word the passes left alone points at
    itself."""
    for source in _corpus():
        traced = normalize_traced(Traced.of(source), lang)
        assert traced.text == normalize(source, lang)
        words = spoken_words(traced)
        assert [w.word for w in words] == split_words(traced.text)
        previous = 0
        for w in words:
            start, end = w.source
            assert 0 <= start < end <= len(source), (source, w)
            assert start >= previous or source[start:end] == source[previous:end], (source, w)
            previous = start
        if traced.text == source.strip():  # nothing rewritten: every word points at itself
            assert all(source[w.source[0] : w.source[1]] == w.word for w in words), source


def test_prepare_traced_cuts_the_same_sentences_as_prepare() -> None:
    source = "Mr. Smith arrived at 5 p.m.   He paid $3.\n\nThen he left."
    traced = prepare_traced(Traced.of(source), "en")
    assert [t.text for t in traced] == prepare(source, "en")
    assert source[traced[1].span(0, len(traced[1]))[0]:].startswith("He paid")  # type: ignore[index]


def test_the_bracket_markup_keeps_the_places_of_the_text_around_it() -> None:
    source = "Hi <300> [there] {h ə l oʊ} you 2"
    units = steps_for_request(source, "en", pause_between_brackets=True, phonemize_between_brackets=True,
                         inline_speed_alpha="1.5").units
    placed_words = [(w.word, source[w.source[0] : w.source[1]]) for u in units if u.origin
                    for w in spoken_words(u.origin)]
    assert placed_words == [("Hi", "Hi"), ("there", "there"), ("you", "you"), ("two", "2")]


def test_ssml_offsets_count_in_the_document_with_markup_left_out() -> None:
    doc = ('<speak><p>Dr. Lee &amp; co paid <say-as interpret-as="cardinal">1,234</say-as> for '
           '<sub alias="World Wide Web">WWW</sub> <phoneme alphabet="ipa" ph="təˈmɑːtoʊ">tomatoes</phoneme>'
           '<sub alias="nothing"/>.</p></speak>')
    units = steps_for_request(doc, "en", ssml=True).units
    said = [(w.word, doc[w.source[0] : w.source[1]]) for u in units if u.origin for w in spoken_words(u.origin)]
    assert said == [
        ("Doctor", "Dr."), ("Lee", "Lee"), ("and", "&amp;"), ("co", "co"), ("paid", "paid"),
        ("one", "1,234"), ("thousand", "1,234"), ("two", "1,234"), ("hundred", "1,234"), ("thirty-four", "1,234"),
        ("for", "for"), ("World", "WWW"), ("Wide", "WWW"), ("Web", "WWW"), ("tomatoes", "tomatoes"),
        ("nothing", ""),  # an empty sub stands where it is written
    ]
    empty = next(u for u in units if u.origin and "nothing" in u.origin.text)
    where = spoken_words(empty.origin)[-1].source  # type: ignore[arg-type]
    assert doc[where[0]:].startswith('<sub alias="nothing"/>')


def test_a_lexicon_alias_points_at_its_grapheme() -> None:
    from speech.text.pls import parse_pls

    pls = ('<?xml version="1.0"?><lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" '
           'alphabet="ipa" xml:lang="en"><lexeme><grapheme>NYC</grapheme><alias>New York City</alias></lexeme>'
           '<lexeme><grapheme>Nguyen</grapheme><phoneme>wɪn</phoneme></lexeme></lexicon>')
    source = "Mr Nguyen flew to NYC today."
    units = steps_for_request(source, "en", lexicons=[parse_pls(pls)]).units
    said = [(w.word, source[w.source[0] : w.source[1]]) for u in units if u.origin for w in spoken_words(u.origin)]
    assert said == [("Mister", "Mr"), ("Nguyen", "Nguyen"), ("flew", "flew"), ("to", "to"), ("New", "NYC"),
                    ("York", "NYC"), ("City", "NYC"), ("today", "today")]


def test_locate_matches_timings_to_words_in_order() -> None:
    traced = normalize_traced(Traced.of("Hello, 2 worlds and 2 more."))
    timings = [WordTiming(w, i, i + 1.0) for i, w in enumerate(["Hello", "two", "worlds", "and", "two", "more"])]
    located = locate(timings, traced)
    assert [t.source for t in located] == [(0, 5), (7, 8), (9, 15), (16, 19), (20, 21), (22, 26)]
    assert [(t.word, t.start, t.end) for t in located] == [(t.word, t.start, t.end) for t in timings]


def test_locate_finds_words_a_segmenter_cut_its_own_way_and_leaves_unknown_ones_unplaced() -> None:
    source = "今日は晴れ"
    traced = Traced.of(source)
    located = locate([WordTiming("今日", 0, 1), WordTiming("は", 1, 2), WordTiming("雨", 2, 3), WordTiming("晴れ", 3, 4)],
                     traced)
    assert [t.source for t in located] == [(0, 2), (2, 3), None, (3, 5)]
    assert locate([WordTiming("mark", 0, 0)], None)[0].source is None


def test_runs_place_a_copied_text_in_its_source() -> None:
    source = "# Title\n\nIt  was\n a dark night."
    chunk = "It was a dark night."
    runs = [(0, 9), (3, 13), (7, 18)]
    spans = [placed(w.source, runs) for w in spoken_words(Traced.of(chunk))]
    assert [source[start:end] for start, end in spans] == ["It", "was", "a", "dark", "night"]
    assert source[slice(*placed((3, 13), runs))] == "was\n a dark"


_PIECES = st.sampled_from([
    "40", "-", "60", "°C", "$", "5.20", "€", "%", "/", "11/22/2026", "10:30", "a.m.", "Dr.", "e.g.", "U.S.A.", "*", "**",
    "#", "@", "x.com", "½", "1st", "IV", "Chapter", "Henry", "kg", "km/h", "1,234", "the", "café", " ", "  ", "\n",
    "\n\n", "\t", ".", ",", "!", "?", "'", "“", "”", "(", ")", "&", "+1 (555) 123-4567", "1990s", "'80s", "3", "x",
])


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=25), lang=st.sampled_from(["en", "de", "fr", "es"]))
def test_any_text_normalises_the_same_and_every_word_lands_inside_it(pieces: list[str], lang: str) -> None:
    source = "".join(pieces)
    traced = normalize_traced(Traced.of(source), lang)
    assert traced.text == normalize(source, lang)
    words = spoken_words(traced)
    assert [w.word for w in words] == split_words(traced.text)
    for w in words:
        assert 0 <= w.source[0] < w.source[1] <= len(source), (source, w)
    timings = [WordTiming(w, float(i), i + 0.5) for i, w in enumerate(split_words(traced.text))]
    assert all(t.source is not None for t in locate(timings, traced))


@given(st.lists(st.tuples(st.text(min_size=1, max_size=6), st.integers(0, 50), st.integers(0, 6), st.booleans()),
                min_size=1, max_size=8), st.integers(0, 40))
@settings(max_examples=200, deadline=None)
def test_pack_and_unpack_give_the_same_spans_back(parts: list[tuple[str, int, int, bool]], base: int) -> None:
    """Copied runs and runs read in place of a span, in any mix, survive the packed form."""
    traced = Traced.join(Traced.of(t, base + s) if copied else Traced.spread(t, (base + s, base + s + n))
                         for t, s, n, copied in parts)
    packed = pack(traced, base)
    assert unpack(traced.text, packed, base) == traced
    assert len(packed) <= len(parts)  # one run per part at most: the form stays small


def test_unpack_refuses_spans_for_another_text() -> None:
    packed = pack(Traced.of("ab") + Traced.spread("and", (2, 7)))
    with pytest.raises(ValueError, match="packed spans for 2 characters, the text has 1"):
        unpack("a", packed)


def test_a_stream_is_never_cut_inside_what_one_written_token_became() -> None:
    """The first piece of a stream (``speech.streaming``) may be cut before "to"; in "forty to
    sixty degrees Celsius", read from "40-60°C", that cut would leave "forty" pointing at "40-60"
    and the rest at a part of the same token. Seen under load in the SSE offsets test."""
    from speech.text.first_piece import cut_first

    traced = normalize_traced(Traced.of("Dr. Lee paid the tailor at 40-60°C yesterday."), "en")
    text = traced.text
    inside = text.index(" to sixty") + 1
    assert not traced.parts_at(inside)
    assert traced.parts_at(text.index("yesterday"))
    reach = len(text) - len("sixty degrees Celsius yesterday.")
    free = cut_first(text, "en", reach)
    assert free is not None and free[1].startswith("to sixty")  # the cut it would make unchecked
    kept = cut_first(text, "en", reach, allowed=traced.parts_at)
    assert kept is None or not kept[1].startswith(("to sixty", "sixty", "degrees", "Celsius"))
