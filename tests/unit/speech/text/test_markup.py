import pytest

from speech.errors import TextError
from speech.text.markup import (
    MAX_PAUSE_MS,
    PauseSegment,
    PhonemeSegment,
    TextSegment,
    parse_inline_speeds,
    parse_markup,
    spoken_text,
)

SOURCE = "Hello <200> {h ə l oʊ} and [slow] or [fast] words."


def test_flags_off_leave_brackets_as_text():
    assert parse_markup(SOURCE) == [TextSegment(SOURCE)]


def test_pauses():
    assert parse_markup("One <200> two<1500>three", pause_between_brackets=True) == [
        TextSegment("One "),
        PauseSegment(200),
        TextSegment(" two"),
        PauseSegment(1500),
        TextSegment("three"),
    ]


def test_pause_flag_alone_keeps_other_brackets():
    assert parse_markup(SOURCE, pause_between_brackets=True) == [
        TextSegment("Hello "),
        PauseSegment(200),
        TextSegment(" {h ə l oʊ} and [slow] or [fast] words."),
    ]


def test_phonemes():
    assert parse_markup("Say {t ə m eɪ t oʊ} now", phonemize_between_brackets=True) == [
        TextSegment("Say "),
        PhonemeSegment("t ə m eɪ t oʊ"),
        TextSegment(" now"),
    ]


def test_inline_speeds_apply_in_order():
    assert parse_markup("a [b] c [d e] f", inline_speed_alpha="0.5, 3") == [
        TextSegment("a "),
        TextSegment("b", 0.5),
        TextSegment(" c "),
        TextSegment("d e", 3.0),
        TextSegment(" f"),
    ]


def test_brackets_beyond_the_speed_list_use_the_request_speed():
    assert parse_markup("[a] [b] [c]", inline_speed_alpha=[2]) == [
        TextSegment("a", 2.0),
        TextSegment(" b c"),
    ]


def test_everything_together():
    segments = parse_markup(
        SOURCE, pause_between_brackets=True, phonemize_between_brackets=True, inline_speed_alpha="0.5, 3"
    )
    assert segments == [
        TextSegment("Hello "),
        PauseSegment(200),
        TextSegment(" "),
        PhonemeSegment("h ə l oʊ"),
        TextSegment(" and "),
        TextSegment("slow", 0.5),
        TextSegment(" or "),
        TextSegment("fast", 3.0),
        TextSegment(" words."),
    ]
    assert spoken_text(segments) == "Hello   and slow or fast words."


def test_degenerate_markup():
    assert parse_markup("a <0> b {} c", pause_between_brackets=True, phonemize_between_brackets=True) == [
        TextSegment("a  b  c")
    ]
    assert parse_markup("<99999999>", pause_between_brackets=True) == [PauseSegment(MAX_PAUSE_MS)]
    assert parse_markup(
        "<abc> <-5> {unclosed", pause_between_brackets=True, phonemize_between_brackets=True
    ) == [TextSegment("<abc> <-5> {unclosed")]
    assert parse_markup("", pause_between_brackets=True) == []
    assert parse_markup("") == []


@pytest.mark.parametrize(
    ("value", "speeds"),
    [
        ("0.5, 3", (0.5, 3.0)),
        ("1", (1.0,)),
        (" 2 ,0.25 ", (2.0, 0.25)),
        ("", None),
        (None, None),
        ([1, 2.5], (1.0, 2.5)),
    ],
)
def test_parse_inline_speeds(value, speeds):
    assert parse_inline_speeds(value) == speeds


@pytest.mark.parametrize("value", ["fast", "1, x", "0", "-1", "nan", "inf"])
def test_bad_inline_speeds_are_text_errors(value):
    with pytest.raises(TextError):
        parse_inline_speeds(value)


def test_fractional_pause_tags_as_pipecat_writes_them() -> None:
    from speech.text import PauseSegment, parse_markup

    assert PauseSegment(500) in parse_markup("a <500.0> b", pause_between_brackets=True)
