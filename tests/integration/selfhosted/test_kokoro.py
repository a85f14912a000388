"""A self-hosted pair whose model service serves a Kokoro voice beside joe, loaded the way
``lector model-server --voice julien,joe`` loads them: the Kokoro voice speaks over HTTP and the
JSON WebSocket with its word timings, and a voice the model service does not serve is a clear
400 (retrying cannot help), not a 500."""

from __future__ import annotations

import base64
import io
import json
import wave
from collections.abc import Callable, Iterator

import httpx
import numpy as np
import pytest
from websockets.sync.client import connect

from facade.model_service import create_model_app
from lector.commands.model_server import engine_factories
from lector.settings import Settings
from tests.integration.selfhosted.conftest import Api
from tests.support.servers import ServerThread, wait_until


@pytest.fixture(scope="module")
def pair_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("model-data"), device="cpu", torch_threads=1)
    server = ServerThread(create_model_app(voices=engine_factories(settings, "julien,joe"), window_ms=10)).start()
    assert wait_until(lambda: httpx.get(server.url + "/readyz").status_code == 200, timeout=180)
    yield server
    server.close()


def test_a_kokoro_voice_through_a_self_hosted_pair(start_api: Callable[..., Api], pair_service: ServerThread) -> None:
    ready = httpx.get(pair_service.url + "/readyz").json()
    assert ready["voices"] == ["julien", "joe"] and ready["sampleRates"] == {"julien": 24000, "joe": 22050}
    api = start_api(model_url=pair_service.url + "/invocations")
    before = httpx.get(pair_service.url + "/stats").json()["items"]

    body = {"text": "Bonjour à tous.", "speaker": "julien", "modelId": "mist", "lang": "fr", "samplingRate": 16000}
    response = api.post(body, accept="audio/wav")
    assert response.status_code == 200, response.text
    with wave.open(io.BytesIO(response.content)) as w:
        assert w.getframerate() == 16000
        samples = np.frombuffer(w.readframes(w.getnframes()), "<i2") / 32767.0
    assert 0.6 < len(samples) / 16000 < 4.0 and float(np.abs(samples).max()) > 0.05
    assert httpx.get(pair_service.url + "/stats").json()["items"] == before + 1  # made by the model service

    query = "speaker=julien&modelId=mist&lang=fr&audioFormat=pcm&samplingRate=24000&segment=never"
    with connect(f"{api.ws_url}/ws3?{query}", additional_headers=api.headers, open_timeout=10) as ws:
        ws.send(json.dumps({"text": "Merci beaucoup. ", "contextId": "c1"}))
        ws.send(json.dumps({"operation": "flush", "contextId": "c1"}))
        ws.send(json.dumps({"operation": "eos"}))
        events = [json.loads(raw) for raw in ws]
    assert [e["type"] for e in events][-2:] == ["timestamps", "done"]
    pcm = b"".join(base64.b64decode(e["data"]) for e in events if e["type"] == "chunk")
    seconds = len(pcm) / 2 / 24000
    stamps = events[-2]["word_timestamps"]
    assert [w.strip(".").lower() for w in stamps["words"]] == ["merci", "beaucoup"]
    assert stamps["start"] == sorted(stamps["start"]) and 0 <= stamps["start"][0] < stamps["end"][-1] <= seconds + 0.05


@pytest.mark.parametrize("accept", ["audio/pcm", None])
def test_a_voice_the_model_service_does_not_serve_is_a_clear_400(
    start_api: Callable[..., Api], pair_service: ServerThread, accept: str | None
) -> None:
    """``lena`` is a voice of ``mist`` (German, Kokoro), so the API accepts the request; the model
    service was started without her. Streaming and the JSON shape both answer 400 and say why."""
    api = start_api(model_url=pair_service.url + "/invocations")
    response = api.post({"text": "Guten Morgen.", "speaker": "lena", "modelId": "mist", "lang": "de"}, accept=accept)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == "speaker lena is not served by this deployment's model service (it serves julien, joe)"


def test_phonemize_on_a_model_service_answers_for_the_voice_named(pair_service: ServerThread) -> None:
    from facade.remote_engine import RemoteEngine

    url = pair_service.url + "/invocations"
    assert "bɔ̃ʒˈuʁ" in RemoteEngine(url, voice="julien").phonemize("Bonjour")
    assert "həlˈoʊ" in RemoteEngine(url, voice="joe").phonemize("hello")
