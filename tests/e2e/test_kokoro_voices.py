"""Kokoro voices everywhere a voice is used, over the real stack (API under uvicorn, a Celery
worker, PostgreSQL, Redis, Swift): streaming HTTP in every Accept format, the JSON and SSE
variants, ``/ws``, ``/ws2``, ``/ws3``, ``/phonemize`` and a book job.

Kokoro runs at about real time on this CPU, so every text is a few words; non-English voices
(the catalog's mist lineups give English to joe, the other nine languages to Kokoro)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import threading
import time
import wave
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import av
import httpx
import numpy as np
import pytest
import websockets
from sqlalchemy import text as sql
from websockets.exceptions import ConnectionClosed

from books.chunks import meta_key_of
from speech.engines.kokoro.phonemes import VOCAB
from store.db.session import make_engine
from tests.support.books import s3_store
from tests.support.wav import fix_streaming_sizes

pytestmark = [pytest.mark.integration, pytest.mark.slow]

KOKORO_RATE = 24000
TWO_SENTENCES = "Bonjour à tous. Merci beaucoup."  # julien, French, in every mist lineup and coda


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _tts(stack: Any, key: str, body: dict[str, Any], accept: str) -> httpx.Response:
    return httpx.post(f"{stack.api_url}/v1/service-tts", json=body, headers={**_auth(key), "Accept": accept}, timeout=120)


def _voiced(samples: np.ndarray) -> None:
    """Speech, not silence or clipping noise: some loud frames, a quiet-ish mean."""
    assert samples.size and np.isfinite(samples).all()
    peak = float(np.abs(samples).max())
    assert 0.05 < peak <= 1.0
    assert float(np.sqrt(np.mean(samples**2))) < 0.5 * peak


def _words_fit(words: list[str], start: list[float], end: list[float], seconds: float, expected: int) -> None:
    assert len(words) == len(start) == len(end) >= expected, (words, start, end)
    assert start == sorted(start) and end == sorted(end)
    assert all(0.0 <= s < e <= seconds + 0.05 for s, e in zip(start, end, strict=True)), (start, end, seconds)


def _wav(data: bytes) -> tuple[int, np.ndarray]:
    with wave.open(io.BytesIO(fix_streaming_sizes(data))) as wav:
        assert wav.getsampwidth() == 2 and wav.getnchannels() == 1
        rate = wav.getframerate()
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2")
    return rate, pcm.astype(np.float32) / 32767.0


# -- streaming HTTP ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "sampling_rate", "content_type", "container", "rate"),
    [
        ("audio/webm;codecs=opus", None, "audio/webm;codecs=opus", "webm", 48000),  # Opus decodes at 48 kHz
        ("audio/ogg;codecs=opus", None, "audio/ogg;codecs=opus", "ogg", 48000),
        ("audio/mpeg", None, "audio/mpeg", "mp3", KOKORO_RATE),
        ("audio/wav", 16000, "audio/wav", "wav", 16000),  # resampled from Kokoro's 24 kHz
        ("audio/L16", None, "audio/L16;rate=24000;channels=1", "s16", KOKORO_RATE),
        ("audio/PCMU", None, "audio/PCMU;rate=8000;channels=1", "mulaw", 8000),
    ],
)
def test_every_accept_format_with_a_french_kokoro_voice(  # type: ignore[no-untyped-def]
    stack, api_key: str, accept: str, sampling_rate: int | None, content_type: str, container: str, rate: int
) -> None:
    body: dict[str, Any] = {"text": TWO_SENTENCES, "speaker": "julien", "lang": "fr"}
    if sampling_rate:
        body["samplingRate"] = sampling_rate
    response = _tts(stack, api_key, body, accept)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == content_type
    if container == "s16":
        samples = np.frombuffer(response.content, dtype="<i2").astype(np.float32) / 32767.0
    elif container == "mulaw":
        assert len(response.content) > 0.3 * 8000
        samples = None  # one byte a sample: its length is the duration
        seconds = len(response.content) / 8000
    elif container == "wav":
        got_rate, samples = _wav(response.content)
        assert got_rate == rate
    else:
        with av.open(io.BytesIO(response.content), format=container) as f:
            stream = f.streams.audio[0]
            frames = [frame.to_ndarray().reshape(-1) for frame in f.decode(stream)]
            assert stream.rate == rate
        samples = np.concatenate(frames).astype(np.float32)
    if samples is not None:
        _voiced(samples)
        seconds = samples.size / rate
    assert 1.2 < seconds < 6.0, seconds  # two short sentences, each streamed as it is made


def test_json_variant_with_a_kokoro_voice(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    body = {"text": "Guten Morgen.", "speaker": "lena", "lang": "de", "modelId": "mist", "audioFormat": "wav"}
    response = _tts(stack, api_key, body, "application/json")
    assert response.status_code == 200, response.text
    rate, samples = _wav(base64.b64decode(response.json()["audioContent"]))
    assert rate == KOKORO_RATE
    _voiced(samples)
    assert 0.4 < samples.size / rate < 4.0


def test_server_sent_events_with_a_kokoro_voice(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    body = {"text": "Buenos días. Hasta luego.", "speaker": "lucia", "lang": "es", "modelId": "mistv2"}
    response = _tts(stack, api_key, body, "text/event-stream")
    assert response.status_code == 200, response.text
    events = [block for block in response.text.split("\n\n") if block.strip()]
    names = [block.split("\n")[0].removeprefix("event: ") for block in events]
    assert names[0] == "chunk" and names.count("chunk") >= 2 and names[-2:] == ["timestamps", "done"]
    data = [json.loads(block.split("data: ", 1)[1]) for block in events]
    pcm = b"".join(base64.b64decode(d["data"]) for n, d in zip(names, data, strict=True) if n == "chunk")
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32767.0
    _voiced(samples)
    seconds = samples.size / 16000  # mistv2's pcm default rate
    assert 1.0 < seconds < 6.0
    stamps = data[names.index("timestamps")]["word_timestamps"]
    _words_fit(stamps["words"], stamps["start"], stamps["end"], seconds, expected=4)
    assert [w.strip(".").lower() for w in stamps["words"]] == ["buenos", "días", "hasta", "luego"]


# -- WebSockets -------------------------------------------------------------------------------------


def _ws_url(stack: Any, path: str, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return stack.api_url.replace("http://", "ws://") + path + "?" + query


async def _json_session(url: str, key: str, text: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    async with websockets.connect(url, additional_headers=_auth(key)) as ws:
        await ws.send(json.dumps({"text": text, "contextId": "k1"}))
        await ws.send(json.dumps({"operation": "flush", "contextId": "k1"}))
        while not events or events[-1]["type"] != "done":
            events.append(json.loads(await asyncio.wait_for(ws.recv(), 120)))
    return events


@pytest.mark.parametrize(
    ("path", "params", "text", "words"),
    [
        ("/ws3", {"speaker": "giulia", "lang": "it", "modelId": "coda"}, "Buongiorno a tutti.", ["buongiorno", "a", "tutti"]),
        ("/ws2", {"speaker": "sanne", "lang": "nl"}, "Goedemorgen allemaal.", ["goedemorgen", "allemaal"]),
    ],
)
async def test_json_websockets_carry_kokoro_audio_and_word_timings(  # type: ignore[no-untyped-def]
    stack, api_key: str, path: str, params: dict[str, str], text: str, words: list[str]
) -> None:
    url = _ws_url(stack, path, audioFormat="pcm", samplingRate="24000", segment="never", **params)
    events = await _json_session(url, api_key, text)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "chunk" and kinds[-2:] == ["timestamps", "done"], kinds
    assert {e.get("contextId") for e in events} == {"k1"}
    pcm = b"".join(base64.b64decode(e["data"]) for e in events if e["type"] == "chunk")
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32767.0
    _voiced(samples)
    seconds = samples.size / KOKORO_RATE
    assert 0.5 < seconds < 5.0
    stamps = next(e for e in events if e["type"] == "timestamps")["word_timestamps"]
    _words_fit(stamps["words"], stamps["start"], stamps["end"], seconds, expected=len(words))
    assert [w.strip(".").lower() for w in stamps["words"]] == words


async def test_raw_websocket_speaks_a_kokoro_voice(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    url = _ws_url(stack, "/ws", speaker="beatriz", lang="pt", audioFormat="pcm", samplingRate="16000")
    audio = bytearray()
    async with websockets.connect(url, additional_headers=_auth(api_key)) as ws:
        await ws.send("Bom dia.")
        await ws.send("<EOS>")
        with pytest.raises(ConnectionClosed):
            while True:
                frame = await asyncio.wait_for(ws.recv(), 120)
                assert isinstance(frame, bytes)
                audio.extend(frame)
    samples = np.frombuffer(bytes(audio), dtype="<i2").astype(np.float32) / 32767.0
    _voiced(samples)
    assert 0.4 < samples.size / 16000 < 4.0


# -- /phonemize -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"text": "Bonjour à tous", "lang": "fr", "speaker": "julien"}, "bɔ̃ʒ"),
        ({"text": "こんにちは", "lang": "ja", "speaker": "sakura"}, "koɲɲiʨiβa"),
        ({"text": "hello, go home", "lang": "en", "speaker": "owen", "modelId": "coda"}, "hˈOm"),  # Kokoro's O for oʊ
    ],
)
def test_phonemize_answers_kokoros_own_symbols(stack, api_key: str, body: dict[str, str], expected: str) -> None:  # type: ignore[no-untyped-def]
    response = httpx.post(f"{stack.api_url}/phonemize", json=body, headers=_auth(api_key), timeout=60)
    assert response.status_code == 200, response.text
    answer = response.json()
    phonemes = answer["phonemes"]
    assert answer["speaker"] == body["speaker"] and answer["lang"] == body["lang"]
    assert expected in phonemes
    assert set(phonemes) - {" "} <= set(VOCAB), set(phonemes) - set(VOCAB)
    if body["speaker"] == "owen":  # joe (VITS, eSpeak's IPA) says the same words differently
        joe = httpx.post(f"{stack.api_url}/phonemize", json={**body, "speaker": "joe"}, headers=_auth(api_key), timeout=60)
        assert "oʊ" in joe.json()["phonemes"] and "oʊ" not in phonemes


# -- book jobs --------------------------------------------------------------------------------------


class _Receiver(BaseHTTPRequestHandler):
    received: list[bytes] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        type(self).received.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def webhook_url() -> Iterator[str]:
    _Receiver.received = []
    server = HTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/hook"
    server.shutdown()


def test_a_book_job_with_a_kokoro_voice(stack, stack_env: dict[str, str], api_key: str, pg_url: str, webhook_url: str) -> None:  # type: ignore[no-untyped-def]
    book = "Le chat dort.\n\nIl fait beau. Nous partons demain."
    body = {"text": book, "speaker": "julien", "lang": "fr", "format": "wav", "webhookUrl": webhook_url}
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), json=body, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job_id = submitted.json()["id"]
    deadline = time.monotonic() + 240
    while True:
        job = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}", headers=_auth(api_key), timeout=30).json()
        if job["status"] in ("succeeded", "failed", "canceled"):
            break
        assert time.monotonic() < deadline, (job, stack.log_text("worker1")[-3000:])
        time.sleep(0.5)
    assert job["status"] == "succeeded", (job, stack.log_text("worker1")[-3000:])
    total = job["progress"]["chunksTotal"]
    assert job["progress"]["chunksDone"] == total > 0

    # Every chunk was made by the one Kokoro engine: its 24 kHz is in each chunk's stored metadata
    # (joe would be 22050 Hz), and the words it timed are the chunk's own.
    objects = s3_store(stack_env)
    engine = make_engine(pg_url)
    try:
        with engine.connect() as conn:
            keys = conn.execute(sql('SELECT audio_key FROM job_chunks WHERE job_id = :j ORDER BY "index"'),
                                {"j": job_id}).scalars().all()
    finally:
        engine.dispose()
    assert len(keys) == total
    metas = [json.loads(objects.get_bytes(meta_key_of(key))) for key in keys]  # where each chunk's row says
    assert {meta["sample_rate"] for meta in metas} == {KOKORO_RATE}
    spoken = [w["word"] for meta in metas for w in meta["words"]]
    assert [w.strip(".").lower() for w in spoken] == ["le", "chat", "dort", "il", "fait", "beau", "nous", "partons", "demain"]

    redirect = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}/audio", headers=_auth(api_key), timeout=30)
    assert redirect.status_code == 307
    audio = httpx.get(redirect.headers["location"], timeout=60)
    rate, samples = _wav(audio.content)
    assert rate == KOKORO_RATE  # the job's rate is its engine's: no resampling asked for
    _voiced(samples)
    seconds = samples.size / rate
    assert abs(seconds - job["durationSeconds"]) < 0.05 and 2.0 < seconds < 10.0

    engine = make_engine(pg_url)
    try:
        with engine.connect() as conn:
            billed = conn.execute(
                sql("SELECT count(*), sum(characters), min(speaker), max(speaker) FROM usage WHERE job_id = :j"),
                {"j": job_id},
            ).one()
    finally:
        engine.dispose()
    assert billed[0] == total and billed[2] == billed[3] == "julien"
    assert len("".join(book.split())) <= billed[1] <= len(book)

    deadline = time.monotonic() + 30
    while not _Receiver.received and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _Receiver.received, "the webhook never arrived"
    payload = json.loads(_Receiver.received[0])
    assert payload["event"] == "job.succeeded" and payload["jobId"] == job_id
