
import pytest

from speech.text.segment import paragraphs, split_sentences


def texts(source: str, lang: str = "en") -> list[str]:
    return [s.text for s in split_sentences(source, lang)]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("Hello there. How are you? Fine!", ["Hello there.", "How are you?", "Fine!"]),
        ("Mr. Smith met Dr. Jones. They talked.", ["Mr. Smith met Dr. Jones.", "They talked."]),
        ("Use e.g. apples. Or i.e. pears.", ["Use e.g. apples.", "Or i.e. pears."]),
        ("We sell fruit, etc. and more.", ["We sell fruit, etc. and more."]),
        ("We sell fruit etc. The end.", ["We sell fruit etc.", "The end."]),
        ("Pi is 3.14 today. Yes.", ["Pi is 3.14 today.", "Yes."]),
        ("J. K. Rowling wrote it. Really.", ["J. K. Rowling wrote it.", "Really."]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ('"Stop!" he said. "Why?" she asked.', ['"Stop!" he said.', '"Why?" she asked.']),
        ("(See above.) Next one.", ["(See above.)", "Next one."]),
        ("Wait... what? I wonder... Then it came.", ["Wait... what?", "I wonder...", "Then it came."]),
        ("Wait… Then go.", ["Wait…", "Then go."]),
        ("See Fig. 3 and No. 5 for details. Done.", ["See Fig. 3 and No. 5 for details.", "Done."]),
        ("It is 3 p.m. Now go.", ["It is 3 p.m.", "Now go."]),
        ("Visit example.com today. Thanks.", ["Visit example.com today.", "Thanks."]),
        ("No terminator at the end", ["No terminator at the end"]),
        ("Really?! Yes.", ["Really?!", "Yes."]),
        ("He lives in the U.S. He likes it.", ["He lives in the U.S.", "He likes it."]),
        (
            "Hard-wrapped prose goes\non over lines. Then ends.",
            ["Hard-wrapped prose goes\non over lines.", "Then ends."],
        ),
    ],
)
def test_english(source, expected):
    assert texts(source) == expected


@pytest.mark.parametrize(
    ("source", "lang", "expected"),
    [
        ("今日は晴れです。明日は雨！本当？はい", "ja", ["今日は晴れです。", "明日は雨！", "本当？", "はい"]),
        ("「行く。」と言った。", "ja", ["「行く。」", "と言った。"]),
        ("मैं ठीक हूँ। तुम कैसे हो? अच्छा", "hi", ["मैं ठीक हूँ।", "तुम कैसे हो?", "अच्छा"]),
        ("هل أنت بخير؟ نعم. شكرا", "ar", ["هل أنت بخير؟", "نعم.", "شكرا"]),
        (
            "¿Qué tal? ¡Muy bien! El Sr. García llegó. Vale.",
            "es",
            ["¿Qué tal?", "¡Muy bien!", "El Sr. García llegó.", "Vale."],
        ),
        (
            "Am 3. Mai kam er, z. B. mit Dr. Weber. Gut.",
            "de",
            ["Am 3. Mai kam er, z. B. mit Dr. Weber.", "Gut."],
        ),
        ("M. Dupont est là. Mme Curie aussi.", "fr", ["M. Dupont est là.", "Mme Curie aussi."]),
        ("Dhr. Jansen komt. Mevr. ook.", "nl", ["Dhr. Jansen komt.", "Mevr. ook."]),
    ],
)
def test_other_scripts_and_languages(source, lang, expected):
    assert texts(source, lang) == expected


def test_offsets_point_into_the_original():
    source = "  First one.   Second one!\n\nThird?  "
    spans = split_sentences(source, "en")
    assert [source[s.start : s.end] for s in spans] == [s.text for s in spans]
    assert [s.text for s in spans] == ["First one.", "Second one!", "Third?"]


def test_paragraph_boundaries_are_marked():
    source = "One. Two.\n\nThree.\r\n\r\nFour. Five.\n \n\nSix."
    spans = split_sentences(source, "en")
    assert [(s.text, s.paragraph, s.paragraph_break_before) for s in spans] == [
        ("One.", 0, False),
        ("Two.", 0, False),
        ("Three.", 1, True),
        ("Four.", 2, True),
        ("Five.", 2, False),
        ("Six.", 3, True),
    ]


def test_single_newline_is_not_a_boundary_but_blank_line_is():
    assert len(paragraphs("a\nb")) == 1
    assert len(paragraphs("a\n\nb")) == 2
    assert len(paragraphs("a\u2029b")) == 2


@pytest.mark.parametrize("source", ["", "   ", "\n\n\n"])
def test_blank_text_has_no_sentences(source):
    assert split_sentences(source) == []


def test_unknown_language_segments_like_english():
    assert texts("Mr. X went. Ok.", "zz") == ["Mr. X went.", "Ok."]


def test_the_reference_book_keeps_every_character():
    from tests.support.corpus import CORPUS

    text = CORPUS.read_text(encoding="utf-8")[:60_000]
    spans = split_sentences(text, "en")
    assert len(spans) > 300
    # Only whitespace lies between sentences: nothing dropped, nothing repeated.
    assert "".join("".join(s.text.split()) for s in spans) == "".join(text.split())
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:], strict=False))
    assert any(s.paragraph_break_before for s in spans)
