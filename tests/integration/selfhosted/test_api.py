"""The self-hosted API with the real voice behind a real model service: both response shapes,
auth, the vendor API contract's errors, and the JSON WebSocket on the second port."""

from __future__ import annotations

import base64
import io
import json
import wave
from collections.abc import Callable

import numpy as np
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.integration.selfhosted.conftest import HASHED_KEY, Api
from tests.support.servers import ServerThread

BODY = {"text": "Hello from the self-hosted service.", "speaker": "joe", "modelId": "mist", "lang": "en"}


@pytest.fixture
def api(start_api: Callable[..., Api], joe_service: ServerThread) -> Api:
    return start_api(model_url=joe_service.url + "/invocations")


def _speech_like(samples: np.ndarray, rate: int, text: str) -> None:
    """Audible, and about as long as the text takes to say (5-25 characters a second)."""
    seconds = len(samples) / rate
    assert 5 <= len(text) / seconds <= 25, seconds
    assert float(np.sqrt(np.mean(samples.astype(np.float64) ** 2))) > 0.01


@pytest.mark.parametrize(
    "accept, content_type",
    [
        ("audio/mp3", "audio/mpeg"),
        ("audio/mpeg", "audio/mpeg"),
        ("audio/pcm", "audio/L16;rate=24000;channels=1"),
        ("audio/L16", "audio/L16;rate=24000;channels=1"),
        ("audio/wav", "audio/wav"),
        ("audio/x-mulaw", "audio/PCMU;rate=8000;channels=1"),
        ("audio/ogg;codecs=opus", "audio/ogg;codecs=opus"),
        ("audio/webm;codecs=opus", "audio/webm;codecs=opus"),
    ],
)
def test_an_audio_accept_streams_audio(api: Api, accept: str, content_type: str) -> None:
    response = api.post(BODY, accept=accept)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == content_type
    data = response.content
    if accept in ("audio/pcm", "audio/L16"):
        _speech_like(np.frombuffer(data, "<i2") / 32767.0, 24000, BODY["text"])
    elif accept == "audio/wav":
        with wave.open(io.BytesIO(data)) as w:
            _speech_like(np.frombuffer(w.readframes(w.getnframes()), "<i2") / 32767.0, w.getframerate(), BODY["text"])
    elif "mp" in accept:
        assert data[:3] == b"ID3" or data[0] == 0xFF
    elif "ogg" in accept:
        assert data[:4] == b"OggS"
    elif "webm" in accept:
        assert data[:4] == b"\x1a\x45\xdf\xa3"
    assert len(data) > 1000


@pytest.mark.parametrize("accept", [None, "*/*", "audio/*", "application/json", "text/html"])
def test_without_an_audio_accept_the_answer_is_the_json_shape(api: Api, accept: str | None) -> None:
    response = api.post(BODY, accept=accept)
    assert response.status_code == 200, response.text
    body = response.json()
    assert list(body) == ["audioContent"] and list(body["audioContent"]) == ["model_output"]
    wav_bytes = base64.b64decode(body["audioContent"]["model_output"])
    with wave.open(io.BytesIO(wav_bytes)) as w:
        assert (w.getframerate(), w.getsampwidth(), w.getnchannels()) == (24000, 2, 1)
        _speech_like(np.frombuffer(w.readframes(w.getnframes()), "<i2") / 32767.0, 24000, BODY["text"])


def test_the_json_shape_honours_audio_format(api: Api) -> None:
    response = api.post({**BODY, "audioFormat": "mp3"})
    audio = base64.b64decode(response.json()["audioContent"]["model_output"])
    assert audio[:3] == b"ID3" or audio[0] == 0xFF
    assert api.post({**BODY, "audioFormat": "flac"}).status_code == 400


def test_auth_and_the_contract_s_errors(api: Api) -> None:
    import httpx

    missing = httpx.post(api.url + "/", json=BODY)
    assert (missing.status_code, missing.text) == (401, "Missing Authorization header")
    wrong = httpx.post(api.url + "/", json=BODY, headers={"Authorization": "Bearer nope"})
    assert (wrong.status_code, wrong.text) == (401, "invalid api key")
    hashed = httpx.post(api.url + "/", json=BODY, headers={"Authorization": f"Bearer {HASHED_KEY}", "Accept": "audio/pcm"})
    assert hashed.status_code == 200  # configured as sha256:<hex>
    no_text = api.post({"speaker": "joe"})
    assert (no_text.status_code, no_text.text) == (400, "text is required")
    flac = api.post(BODY, accept="audio/flac")
    assert flac.status_code == 406 and flac.text.startswith('modelId "mist" can only be returned as streamed audio')
    unknown = api.post({**BODY, "speaker": "nobody"})
    assert unknown.status_code == 400


def test_the_json_websocket_on_the_second_port(api: Api) -> None:
    query = "speaker=joe&modelId=mistv3&audioFormat=pcm&samplingRate=16000&segment=never"
    with connect(f"{api.ws_url}/ws3?{query}", additional_headers=api.headers, open_timeout=10) as ws:
        ws.send(json.dumps({"text": "Sockets work too. ", "contextId": "c1"}))
        ws.send(json.dumps({"operation": "flush", "contextId": "c1"}))
        ws.send(json.dumps({"operation": "eos"}))
        events = []
        for raw in ws:
            events.append(json.loads(raw))
    kinds = [event["type"] for event in events]
    assert kinds[-2:] == ["timestamps", "done"] and set(kinds[:-2]) == {"chunk"}
    pcm = b"".join(base64.b64decode(e["data"]) for e in events if e["type"] == "chunk")
    _speech_like(np.frombuffer(pcm, "<i2") / 32767.0, 16000, "Sockets work too.")
    words = events[-2]["word_timestamps"]
    assert words["words"][:2] == ["Sockets", "work"] and words["start"] == sorted(words["start"])
    assert all(e.get("contextId") == "c1" for e in events)


def test_the_websocket_refuses_at_the_upgrade(api: Api) -> None:
    with pytest.raises(InvalidStatus) as info:
        connect(f"{api.ws_url}/ws3?speaker=joe", additional_headers={"Authorization": "Bearer nope"}, open_timeout=10)
    assert info.value.response.status_code == 401
    assert info.value.response.body == b"invalid api key"


def test_phonemes_between_brackets_reach_the_model_service(api: Api) -> None:
    """``{...}`` IPA travels to the model service (``input: "ipa"`` on the wire) and is spoken
    there by the neural engine, as it is in-process."""
    plain = api.post({**BODY, "text": "Before. After."}, accept="audio/pcm")
    with_ipa = api.post({**BODY, "text": "Before. {həlˈoʊ wˈɜːld} After.", "phonemizeBetweenBrackets": True},
                        accept="audio/pcm")
    assert (plain.status_code, with_ipa.status_code) == (200, 200), with_ipa.text
    extra_s = (len(with_ipa.content) - len(plain.content)) / 2 / 24000
    assert 0.4 < extra_s < 2.0
