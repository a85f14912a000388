"""Accept negotiation, aliases, the 406 text, audioFormat values and the codec rate rules."""

from __future__ import annotations

import pytest

from speech.audio.formats import (
    JSON_WEBSOCKET_FORMATS,
    RAW_WEBSOCKET_FORMATS,
    STREAMING_FORMATS,
    AudioFormat,
    Representation,
    encode_rate,
    from_audio_format_param,
    from_name,
    mp3_encode_rate,
    negotiate,
    not_acceptable_message,
    opus_encode_rate,
    supported_accept_list,
)
from speech.errors import UnsupportedFormat

F = AudioFormat

CONTRACT_TABLE = [
    ("audio/webm;codecs=opus", F.WEBM_OPUS),
    ("audio/ogg;codecs=opus", F.OGG_OPUS),
    ("audio/mpeg", F.MP3),
    ("audio/wav", F.WAV),
    ("audio/L16", F.PCM),
    ("audio/PCMU", F.MULAW),
]


@pytest.mark.parametrize(("accept", "fmt"), CONTRACT_TABLE)
def test_every_contract_accept_value_negotiates_to_its_format(accept: str, fmt: AudioFormat) -> None:
    result = negotiate(accept)
    assert result.representation is Representation.AUDIO
    assert result.format is fmt
    assert not result.defaulted
    assert fmt.accept_value == accept


@pytest.mark.parametrize(
    ("accept", "fmt"),
    [
        ("audio/mp3", F.MP3),
        ("audio/pcm", F.PCM),
        ("audio/x-mulaw", F.MULAW),
    ],
)
def test_deprecated_aliases_still_accepted(accept: str, fmt: AudioFormat) -> None:
    assert negotiate(accept).format is fmt


@pytest.mark.parametrize(
    ("accept", "fmt"),
    [
        ("audio/ogg; codecs=opus", F.OGG_OPUS),
        ('audio/ogg; codecs="opus"', F.OGG_OPUS),
        ("audio/ogg", F.OGG_OPUS),
        ("audio/webm", F.WEBM_OPUS),
        ("AUDIO/WEBM;CODECS=OPUS", F.WEBM_OPUS),
        ("audio/l16", F.PCM),
        ("audio/pcmu", F.MULAW),
        ("audio/MPEG", F.MP3),
        ("  audio/wav  ", F.WAV),
    ],
)
def test_parameters_spacing_and_case(accept: str, fmt: AudioFormat) -> None:
    assert negotiate(accept).format is fmt


@pytest.mark.parametrize("accept", [None, "", "   ", "*/*", "audio/*", "*/*;q=0.8", "audio/*, */*;q=0.1"])
def test_missing_or_wildcard_gives_defaulted_pcm(accept: str | None) -> None:
    result = negotiate(accept)
    assert result.representation is Representation.AUDIO
    assert result.format is F.PCM
    assert result.defaulted


@pytest.mark.parametrize(
    ("accept", "fmt"),
    [
        ("audio/mpeg;q=0.5, audio/wav", F.WAV),
        ("audio/wav;q=0.1, audio/mpeg;q=0.9", F.MP3),
        ("audio/mpeg, audio/wav", F.MP3),  # equal q: first listed
        ("*/*;q=0.1, audio/PCMU", F.MULAW),
        ("audio/*, audio/ogg;codecs=opus", F.OGG_OPUS),  # more specific at equal q
        ("audio/flac, audio/mpeg;q=0.2", F.MP3),  # unsupported type skipped
        ("audio/mpeg;q=0, audio/wav;q=0.3", F.WAV),
        ("audio/L16;q=0, */*", F.WEBM_OPUS),  # wildcard falls to the first format not excluded
        ("audio/webm,audio/ogg,audio/wav,audio/*;q=0.9,application/ogg;q=0.7,*/*;q=0.5", F.WEBM_OPUS),
        ("audio/mpeg;q=abc, audio/wav;q=0.2", F.WAV),  # malformed q: range ignored
    ],
)
def test_q_values(accept: str, fmt: AudioFormat) -> None:
    assert negotiate(accept).format is fmt


def test_l16_rate_parameter_is_reported() -> None:
    result = negotiate("audio/L16;rate=16000")
    assert result.format is F.PCM
    assert result.rate == 16000
    assert negotiate("audio/L16").rate is None


@pytest.mark.parametrize(
    "accept",
    [
        "audio/flac",
        "text/html",
        "video/webm",
        "audio/ogg;codecs=vorbis",
        "audio/webm;codecs=vp8",
        "audio/mpeg;q=0",
        "image/*",
    ],
)
def test_concrete_unstreamable_type_is_not_acceptable(accept: str) -> None:
    result = negotiate(accept)
    assert result.representation is Representation.NOT_ACCEPTABLE
    assert result.format is None
    assert not result.acceptable


def test_json_and_event_stream_are_reported_distinctly() -> None:
    assert negotiate("application/json").representation is Representation.JSON
    assert negotiate("text/event-stream").representation is Representation.EVENT_STREAM
    assert negotiate("application/json").format is None


def test_json_and_sse_refused_for_models_without_them() -> None:
    assert negotiate("application/json", allow_json=False).representation is Representation.NOT_ACCEPTABLE
    assert negotiate("text/event-stream", allow_sse=False).representation is Representation.NOT_ACCEPTABLE
    fallback = negotiate("application/json, audio/mpeg;q=0.5", allow_json=False)
    assert fallback.format is F.MP3


def test_audio_preferred_over_json_by_q() -> None:
    assert negotiate("application/json;q=0.5, audio/wav").format is F.WAV


def test_supported_list_and_exact_406_message() -> None:
    assert supported_accept_list() == (
        "audio/webm;codecs=opus, audio/ogg;codecs=opus, audio/mpeg, audio/wav, audio/L16, audio/PCMU"
    )
    assert not_acceptable_message("coda") == (
        'modelId "coda" can only be returned as streamed audio; set Accept to one of: '
        "audio/webm;codecs=opus, audio/ogg;codecs=opus, audio/mpeg, audio/wav, audio/L16, audio/PCMU"
    )


def test_every_listed_type_negotiates_back() -> None:
    for value in supported_accept_list().split(", "):
        assert negotiate(value).representation is Representation.AUDIO


def test_streaming_formats_are_the_contract_s_six_in_order() -> None:
    assert [fmt for _, fmt in CONTRACT_TABLE] == list(STREAMING_FORMATS)
    assert not F.FLAC.streamable and not F.M4B.streamable and F.M4B.accept_value is None


def test_content_types() -> None:
    assert F.MP3.content_type() == "audio/mpeg"
    assert F.WEBM_OPUS.content_type(24000) == "audio/webm;codecs=opus"
    assert F.PCM.content_type(16000) == "audio/L16;rate=16000;channels=1"
    assert F.MULAW.content_type(8000) == "audio/PCMU;rate=8000;channels=1"
    assert F.M4B.mime_type == "audio/mp4" and F.M4B.extension == "m4b"


@pytest.mark.parametrize(
    ("value", "fmt"),
    [("mp3", F.MP3), ("mulaw", F.MULAW), ("pcm", F.PCM), ("ogg", F.OGG_OPUS), ("wav", F.WAV), ("MP3", F.MP3)],
)
def test_audio_format_param(value: str, fmt: AudioFormat) -> None:
    assert from_audio_format_param(value) is fmt


def test_audio_format_param_rejects_unknown_and_disallowed() -> None:
    with pytest.raises(UnsupportedFormat):
        from_audio_format_param("aiff")
    with pytest.raises(UnsupportedFormat):
        from_audio_format_param("ogg", allowed=JSON_WEBSOCKET_FORMATS)
    assert from_audio_format_param("ogg", allowed=RAW_WEBSOCKET_FORMATS) is F.OGG_OPUS


def test_from_name() -> None:
    assert from_name("m4b") is F.M4B
    with pytest.raises(UnsupportedFormat):
        from_name("aiff")


@pytest.mark.parametrize(
    ("rate", "expected"),
    [
        (48000, 48000),
        (44100, 48000),
        (32000, 24000),
        (24000, 24000),
        (22050, 24000),
        (16000, 16000),
        (14000, 16000),  # tie between 12000 and 16000 goes up
        (11025, 12000),
        (8000, 8000),
        (6000, 8000),
        (96000, 48000),
    ],
)
def test_opus_rate_rule(rate: int, expected: int) -> None:
    assert opus_encode_rate(rate) == expected
    assert encode_rate(F.OGG_OPUS, rate) == expected


def test_mp3_rate_rule_and_passthrough() -> None:
    assert mp3_encode_rate(22050) == 22050
    assert mp3_encode_rate(23000) == 22050
    assert mp3_encode_rate(96000) == 48000
    assert encode_rate(F.WAV, 23000) == 23000
    with pytest.raises(UnsupportedFormat):
        opus_encode_rate(0)
