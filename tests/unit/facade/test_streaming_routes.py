"""The streaming routes (``/v1/service-tts`` and its JSON and SSE variants, ``/ws3``) on the real
app, over a tone engine (``tests.support.fake_engine``): what each transport sends, in which order,
and that each bills once, without PostgreSQL or a voice's weights. The real voices and clients
drive the same routes in ``tests/e2e/test_http_api.py`` and ``test_websockets.py``."""

from __future__ import annotations

import base64
import io
import json
import wave
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketDenialResponse

from facade.app import compose_app
from facade.deps import Access, Principal, Services, Speech, Usage
from facade.routes import tts, ws
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from tests.support.fake_engine import ToneEngine

KEY = "unit-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
TEXT = "The first sentence is here. The second follows it."


class Sink:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def __call__(self, row: dict[str, Any]) -> None:
        self.rows.append(row)


def _principal(key: str) -> Principal:
    if key != KEY:
        raise PermissionError(key)
    return Principal(None, None, "unit", None, None, 100, "")


def _streaming_routes(app: FastAPI) -> None:
    """The streaming routes alone, billed through a usage sink: no PostgreSQL in a unit test."""
    app.include_router(tts.router)
    app.include_router(ws.router)


@pytest.fixture
def app_parts() -> Iterator[tuple[TestClient, ToneEngine, Sink]]:
    engine, sink = ToneEngine(), Sink()
    services = Services(
        speech=Speech(catalog=Catalog.load(), synthesizer=Synthesizer(lambda _voice: engine)),
        access=Access(authenticator=_principal), usage=Usage(sink=sink), self_hosted=True,
    )
    app = compose_app(lambda: (services, lambda: None), _streaming_routes, needs={"streams": tts.NEEDS})
    with TestClient(app, raise_server_exceptions=False) as client:
        engine.calls.clear()  # the warm-up's
        sink.rows.clear()
        yield client, engine, sink


def _billed(sink: Sink) -> list[int]:
    return [int(row["characters"]) for row in sink.rows]


def test_service_tts_streams_wav_of_every_sentence_and_bills_once(app_parts) -> None:  # type: ignore[no-untyped-def]
    client, engine, sink = app_parts
    response = client.post("/v1/service-tts", headers={**AUTH, "Accept": "audio/wav"},
                           json={"text": TEXT, "speaker": "joe", "samplingRate": 16000})
    assert response.status_code == 200 and response.headers["content-type"].startswith("audio/wav")
    with wave.open(io.BytesIO(response.content)) as wav:  # a streamed WAV: its length is unknown up front
        assert (wav.getframerate(), wav.getsampwidth(), wav.getnchannels()) == (16000, 2, 1)
        seconds = len(wav.readframes(1 << 30)) / 2 / 16000
    spoken = [s for call in engine.calls for s in call[0]]
    assert spoken == ["The first sentence is here.", "The second follows it."]
    assert seconds == pytest.approx(0.01 * sum(len(s) for s in spoken), abs=0.2)
    assert _billed(sink) == [len(TEXT)]


def test_an_unacceptable_format_is_406_and_bills_nothing(app_parts) -> None:  # type: ignore[no-untyped-def]
    client, engine, sink = app_parts
    response = client.post("/v1/service-tts", headers={**AUTH, "Accept": "image/png"}, json={"text": TEXT, "speaker": "joe"})
    assert response.status_code == 406
    assert engine.calls == [] and sink.rows == []


def test_the_json_variant_is_base64_audio(app_parts) -> None:  # type: ignore[no-untyped-def]
    client, _engine, sink = app_parts
    response = client.post("/v1/service-tts", headers={**AUTH, "Accept": "application/json"},
                           json={"text": TEXT, "speaker": "joe", "modelId": "mist", "audioFormat": "wav"})
    assert response.status_code == 200
    audio = base64.b64decode(response.json()["audioContent"])
    assert audio[:4] == b"RIFF" and len(audio) > 16000
    assert _billed(sink) == [len(TEXT)]


def _sse(body: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_the_sse_variant_sends_chunks_then_timestamps_then_done(app_parts) -> None:  # type: ignore[no-untyped-def]
    client, _engine, sink = app_parts
    response = client.post("/v1/service-tts", headers={**AUTH, "Accept": "text/event-stream"},
                           json={"text": TEXT, "speaker": "joe", "modelId": "mistv2", "audioFormat": "pcm"})
    events = _sse(response.text)
    kinds = [kind for kind, _ in events]
    assert kinds[-2:] == ["timestamps", "done"] and set(kinds[:-2]) == {"chunk"}
    words = events[-2][1]["word_timestamps"]["words"]
    assert [w.strip(".") for w in words] == TEXT.replace(".", "").split()
    assert _billed(sink) == [len(TEXT)]


def test_ws3_answers_a_flush_with_chunks_timestamps_and_one_done(app_parts) -> None:  # type: ignore[no-untyped-def]
    client, _engine, sink = app_parts
    with client.websocket_connect("/ws3?speaker=joe&audioFormat=pcm&samplingRate=16000&segment=never",
                                  headers=AUTH) as ws:
        ws.send_text(json.dumps({"text": TEXT, "contextId": "c1"}))
        ws.send_text(json.dumps({"operation": "flush", "contextId": "c1"}))
        events: list[dict[str, Any]] = []
        while not events or events[-1]["type"] != "done":
            events.append(json.loads(ws.receive_text()))
        ws.send_text(json.dumps({"operation": "eos"}))
    kinds = [e["type"] for e in events]
    assert kinds[0] == "chunk" and kinds[-2:] == ["timestamps", "done"] and kinds.count("done") == 1
    assert {e["contextId"] for e in events} == {"c1"}
    pcm = b"".join(base64.b64decode(e["data"]) for e in events if e["type"] == "chunk")
    assert len(pcm) / 2 / 16000 == pytest.approx(0.01 * len(TEXT.replace(" ", "", 1)), abs=0.2)
    assert sum(_billed(sink)) == len(TEXT)


def test_ws3_without_a_key_is_refused_before_any_synthesis(app_parts) -> None:  # type: ignore[no-untyped-def]
    client, engine, _sink = app_parts
    with pytest.raises(WebSocketDenialResponse) as refused, client.websocket_connect("/ws3?speaker=joe") as ws:
        ws.send_text(json.dumps({"text": TEXT}))
        ws.receive_text()
    assert refused.value.status_code == 401
    assert engine.calls == []
