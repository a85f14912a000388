"""The /invocations frame format: what the service writes, the client reads back."""

from __future__ import annotations

import numpy as np
import pytest

from facade import invocations_format as wire
from speech.types import AudioChunk, WordTiming


def _chunks() -> list[AudioChunk]:
    rng = np.random.default_rng(0)
    return [
        AudioChunk(rng.uniform(-0.9, 0.9, 1000).astype(np.float32), 22050, "Hello there.",
                   [WordTiming("Hello", 0.01, 0.2), WordTiming("there", 0.25, 0.4)]),
        AudioChunk(np.zeros(0, dtype=np.float32), 22050, "", []),
    ]


def _stream(chunks: list[AudioChunk], encoding: str) -> bytes:
    body = wire.header_frame(sample_rate=22050, encoding=encoding, sentences=len(chunks), voice="joe")
    for i, chunk in enumerate(chunks):
        body += wire.chunk_frames(i, chunk, encoding)
    return body + wire.json_frame(wire.DONE, {"batches": [2, 2]})


@pytest.mark.parametrize("encoding, tolerance", [("f32", 0.0), ("s16", 1 / 32767)])
def test_round_trip_in_pieces_of_any_size(encoding: str, tolerance: float) -> None:
    data = _stream(_chunks(), encoding)
    pieces = [data[i:i + 7] for i in range(0, len(data), 7)]
    decoded = wire.decode(pieces)
    assert decoded.sample_rate == 22050 and decoded.voice == "joe" and decoded.batches == [2, 2]
    assert [c.text for c in decoded.chunks] == ["Hello there.", ""]
    np.testing.assert_allclose(decoded.chunks[0].samples, _chunks()[0].samples, atol=tolerance + 1e-7)
    assert decoded.chunks[0].words[1].word == "there"
    assert decoded.chunks[0].words[1].start == pytest.approx(0.25)
    assert len(decoded.chunks[1].samples) == 0


def test_a_stream_cut_short_is_an_error() -> None:
    data = _stream(_chunks(), "f32")
    with pytest.raises(wire.WireError, match="middle of a frame"):
        wire.decode([data[:-3]])
    without_done = data[: data.rindex(wire.DONE + b"\x00")]
    with pytest.raises(wire.WireError, match="before its last frame"):
        wire.decode([without_done])


def test_an_error_frame_is_an_error() -> None:
    data = wire.header_frame(sample_rate=16000, encoding="f32", sentences=1, voice=None)
    data += wire.json_frame(wire.ERROR, {"error": "inference failed: out of memory"})
    with pytest.raises(wire.WireError, match="out of memory"):
        wire.decode([data])


@pytest.mark.parametrize(
    "payload, message",
    [
        ([], "JSON object"),
        ({}, "sentences"),
        ({"sentences": []}, "sentences"),
        ({"sentences": ["a", 1]}, "sentences"),
        ({"sentences": ["a"], "lengthScale": "fast"}, "lengthScale"),
        ({"sentences": ["a"], "lengthScale": 0}, "lengthScale"),
        ({"sentences": ["a"], "encoding": "mp3"}, "encoding"),
        ({"sentences": ["a"], "voice": 3}, "voice"),
        ({"sentences": ["a"] * (wire.MAX_SENTENCES + 1)}, "at most"),
    ],
)
def test_bad_requests_say_what_is_wrong(payload: object, message: str) -> None:
    with pytest.raises(wire.WireError, match=message):
        wire.parse_request(payload)


def test_a_good_request_keeps_its_fields() -> None:
    req = wire.parse_request({"sentences": ["Hi."], "voice": "joe", "lengthScale": 1.2, "encoding": "s16"})
    assert wire.parse_request(req.to_json()) == req


def test_input_kind_round_trips_and_is_checked() -> None:
    from facade.invocations_format import InvocationRequest, WireError, parse_request

    request = InvocationRequest(sentences=["həlˈoʊ"], input="ipa")
    assert parse_request(request.to_json()).input == "ipa"
    assert parse_request({"sentences": ["Hi."]}).input == "text"
    import pytest

    with pytest.raises(WireError):
        parse_request({"sentences": ["Hi."], "input": "ssml"})
