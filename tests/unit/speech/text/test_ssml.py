from __future__ import annotations

import pytest

from speech.errors import MalformedXml, SsmlError, UnsafeXml
from speech.text.markup import MAX_PAUSE_MS, MarkSegment, PauseSegment, PhonemeSegment, TextSegment, Voicing
from speech.text.ssml import ALLOWED, looks_like_ssml, parse_ssml

NS = 'xmlns="http://www.w3.org/2001/10/synthesis"'


def _segments(body: str, lang: str = "en") -> list[object]:
    return list(parse_ssml(f'<speak version="1.1" {NS}>{body}</speak>', voice_lang=lang).segments)


def test_plain_text_with_inline_readings_stays_one_sentence_stretch() -> None:
    segments = _segments('It is <say-as interpret-as="ordinal">3</say-as> of <sub alias="World Wide Web">WWW</sub>.')
    assert segments == [TextSegment("It is third of World Wide Web.")]


def test_sentences_and_paragraphs_are_separate_stretches_with_a_pause_after_a_paragraph() -> None:
    segments = _segments("<p><s>One.</s><s>Two.</s></p><p>Three.</p>")
    assert segments == [TextSegment("One."), TextSegment("Two."), PauseSegment(400), TextSegment("Three."), PauseSegment(400)]


@pytest.mark.parametrize(("attrs", "ms"), [('time="250ms"', 250), ('time="2s"', 2000), ('time="1.5s"', 1500),
                                           ('strength="strong"', 700), ("", 400), ('time="99s"', MAX_PAUSE_MS)])
def test_breaks(attrs: str, ms: int) -> None:
    assert _segments(f"A <break {attrs}/> B") == [TextSegment("A "), PauseSegment(ms), TextSegment(" B")]


def test_break_strength_none_is_no_pause() -> None:
    assert _segments('A <break strength="none"/>B') == [TextSegment("A B")]


@pytest.mark.parametrize(("rate", "factor"), [("x-slow", 0.6), ("fast", 1.25), ("150%", 1.5), ("+20%", 1.2),
                                              ("-50%", 0.5), ("0.8", 0.8)])
def test_prosody_rate(rate: str, factor: float) -> None:
    (segment,) = _segments(f'<prosody rate="{rate}">words</prosody>')
    assert isinstance(segment, TextSegment) and segment.voicing.rate == pytest.approx(factor)


def test_nested_prosody_multiplies_rates_and_adds_volumes() -> None:
    (segment,) = _segments('<prosody rate="slow" volume="-6dB"><prosody rate="200%" volume="loud">x</prosody></prosody>')
    assert isinstance(segment, TextSegment)
    assert segment.voicing.rate == pytest.approx(1.6) and segment.voicing.gain_db == pytest.approx(-2.0)


def test_emphasis_is_slower_and_louder() -> None:
    (segment,) = _segments('<emphasis level="strong">now</emphasis>')
    assert isinstance(segment, TextSegment) and segment.voicing.rate is not None
    assert segment.voicing.rate < 1 and segment.voicing.gain_db > 0


def test_phoneme_keeps_its_word_lang_and_voice_switch_and_marks() -> None:
    segments = _segments('<phoneme alphabet="ipa" ph="wɪn">Nguyen</phoneme><mark name="m1"/>'
                         '<lang xml:lang="fr-FR">Bonjour</lang><voice name="nora">Hi</voice>')
    assert segments == [
        PhonemeSegment("wɪn", word="Nguyen"),
        MarkSegment("m1"),
        TextSegment("Bonjour", voicing=Voicing(lang="fr")),
        TextSegment("Hi", voicing=Voicing(voice="nora")),
    ]


def test_a_lang_switch_to_the_voices_own_language_is_no_switch() -> None:
    assert _segments('<lang xml:lang="en-GB">Hello</lang>') == [TextSegment("Hello")]


def test_say_as_reads_in_the_stretchs_language() -> None:
    segments = _segments('<lang xml:lang="de"><say-as interpret-as="cardinal">21</say-as></lang>')
    assert segments == [TextSegment("einundzwanzig", voicing=Voicing(lang="de"))]


@pytest.mark.parametrize(
    ("kind", "fmt", "text", "spoken"),
    [
        ("characters", None, "NASA", "N A S A"),
        ("digits", None, "123", "1 2 3"),
        ("cardinal", None, "1,234", "one thousand, two hundred thirty-four"),
        ("telephone", None, "555-0199", "5 5 5, 0 1 9 9"),
        ("date", "mdy", "11/25/2026", "November twenty-fifth, twenty twenty-six"),
        ("date", "dm", "25.11", "November twenty-fifth"),
        ("date", "y", "1999", "nineteen ninety-nine"),
        ("time", None, "2:30pm", "two thirty p m"),
    ],
)
def test_say_as(kind: str, fmt: str | None, text: str, spoken: str) -> None:
    attrs = f'interpret-as="{kind}"' + (f' format="{fmt}"' if fmt else "")
    (segment,) = _segments(f"<say-as {attrs}>{text}</say-as>")
    assert isinstance(segment, TextSegment)
    assert segment.text.replace("-", " ").replace(",", "") == spoken.replace("-", " ").replace(",", "")


def test_billing_counts_what_is_written_and_sub_aliases_never_markup() -> None:
    document = parse_ssml(
        f'<speak {NS}><p>Hi <break time="1s"/><say-as interpret-as="digits">42</say-as></p>'
        '<sub alias="Doctor">Dr.</sub><!-- a comment --><mark name="x"/></speak>', voice_lang="en")
    assert document.written == "Hi 42Doctor"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('<audio src="a.mp3"/>', r"SSML element <audio> at line 1, column \d+ is not supported"),
        ('<prosody pitch="+10%">x</prosody>', 'SSML attribute "pitch" of <prosody> at line 1'),
        ('<break time="fast"/>', 'time "fast"'),
        ('<break strength="huge"/>', 'strength "huge"'),
        ('<prosody rate="warp">x</prosody>', 'rate "warp"'),
        ('<prosody volume="11">x</prosody>', 'volume "11"'),
        ('<emphasis level="max">x</emphasis>', 'level "max"'),
        ('<say-as interpret-as="verbatim">x</say-as>', 'interpret-as "verbatim" is not supported'),
        ('<say-as interpret-as="date" format="qq">1</say-as>', 'format "qq"'),
        ('<say-as interpret-as="date" format="mdy">13/45/2020</say-as>', "is not a date"),
        ('<say-as interpret-as="time">25:00</say-as>', "is not a time of day"),
        ('<say-as interpret-as="ordinal">first</say-as>', "is not a whole number"),
        ('<say-as interpret-as="cardinal"><s>1</s></say-as>', "may hold only text"),
        ("<sub>x</sub>", "needs alias"),
        ('<phoneme ph="">x</phoneme>', "needs ph"),
        ('<phoneme alphabet="x-sampa" ph="a">x</phoneme>', 'alphabet "x-sampa"'),
        ("<voice>x</voice>", "needs name"),
        ('<voice gender="female">x</voice>', 'attribute "gender" of <voice>'),
        ("<mark/>", "needs name"),
        ('<mark name="a">text</mark>', "must be empty"),
        ("<lang>x</lang>", "needs xml:lang"),
        ('<lang xml:lang="tlh">x</lang>', 'xml:lang "tlh"'),
        ('<x:foo xmlns:x="urn:other">hi</x:foo>', "SSML element <{urn:other}foo>"),
    ],
)
def test_anything_unsupported_is_named_with_its_position(body: str, message: str) -> None:
    with pytest.raises(SsmlError, match=message):
        _segments(body)


def test_the_root_must_be_speak() -> None:
    with pytest.raises(SsmlError, match="must start with <speak>"):
        parse_ssml("<p>hi</p>", voice_lang="en")


def test_broken_and_hostile_documents_are_text_errors_from_the_hardened_parser() -> None:
    with pytest.raises(MalformedXml):
        parse_ssml("<speak>oops", voice_lang="en")
    with pytest.raises(UnsafeXml):
        parse_ssml('<!DOCTYPE speak [<!ENTITY a "b">]><speak>&a;</speak>', voice_lang="en")


def test_every_supported_element_is_documented_in_the_allowed_table() -> None:
    assert set(ALLOWED) == {"speak", "p", "s", "break", "prosody", "emphasis", "say-as", "sub", "phoneme", "lang",
                            "voice", "mark"}


@pytest.mark.parametrize(("text", "ssml"), [("<speak>hi</speak>", True), ('  <?xml version="1.0"?>\n<speak>', True),
                                            ("<speaker>", False), ("say <speak>", False), ("<speak/>", True)])
def test_looks_like_ssml(text: str, ssml: bool) -> None:
    assert looks_like_ssml(text) is ssml
