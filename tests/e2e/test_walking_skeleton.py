"""One real request and one real book job through every room.

The API runs under uvicorn and the worker under Celery, as separate processes, on the test run's
own PostgreSQL database, Redis database and Swift bucket, with the real neural voice.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
import time
import wave
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import httpx
import pytest
from sqlalchemy import text

from scheduler.webhooks import SIGNATURE_HEADER, verify
from store.db.session import make_engine
from tests.support.wav import fix_streaming_sizes

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FIVE_SENTENCES = (
    "The first sentence is short. The second one follows it closely. "
    "A third sentence keeps the stream going for a while longer. "
    "Then comes the fourth, which is also rather long, so that synthesis takes time. "
    "The fifth sentence ends the request."
)


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_voice_list_names_joe(stack) -> None:  # type: ignore[no-untyped-def]
    voices = httpx.get(f"{stack.api_url}/data/voices/all-v2.json").json()
    assert "joe" in voices["mistv3"]["eng"]


def test_wrong_key_is_401_invalid_api_key(stack) -> None:  # type: ignore[no-untyped-def]
    response = httpx.post(
        f"{stack.api_url}/v1/service-tts", headers=_auth("lk_" + "x" * 40), json={"text": "hi", "speaker": "joe"}
    )
    assert (response.status_code, response.text) == (401, "invalid api key")
    assert response.headers["content-type"].startswith("text/plain")


def test_streaming_wav_first_bytes_before_last_sentence(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    arrivals: list[tuple[float, int]] = []
    body = bytearray()
    started = time.monotonic()
    with httpx.stream(
        "POST", f"{stack.api_url}/v1/service-tts",
        headers={**_auth(api_key), "Accept": "audio/wav"},
        json={"text": FIVE_SENTENCES, "speaker": "joe", "samplingRate": 16000}, timeout=120,
    ) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"] == "audio/wav"
        for piece in response.iter_raw():
            arrivals.append((time.monotonic() - started, len(piece)))
            body.extend(piece)
    first, last = arrivals[0][0], arrivals[-1][0]
    # Five sentences are synthesized one after another: the first audio must arrive well before the end.
    assert len(arrivals) >= 5
    assert first < last * 0.4, arrivals  # the first of five sentences, not two
    with wave.open(io.BytesIO(fix_streaming_sizes(bytes(body)))) as wav:
        assert wav.getframerate() == 16000
        assert wav.getsampwidth() == 2
        seconds = wav.getnframes() / wav.getframerate()
    assert 6.0 < seconds < 30.0


def test_pcm_is_the_default_and_at_the_requested_rate(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    response = httpx.post(
        f"{stack.api_url}/v1/service-tts", headers=_auth(api_key),
        json={"text": "Hello there.", "speaker": "joe"}, timeout=60,
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("audio/L16")
    assert "rate=24000" in response.headers["content-type"]
    seconds = len(response.content) / 2 / 24000
    assert 0.4 < seconds < 3.0


class _Receiver(BaseHTTPRequestHandler):
    received: list[tuple[dict[str, str], bytes]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).received.append((dict(self.headers), body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def webhook_receiver() -> Iterator[tuple[str, list[tuple[dict[str, str], bytes]]]]:
    _Receiver.received = []
    server = HTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/hook", _Receiver.received
    server.shutdown()


def test_book_job_end_to_end(stack, api_key: str, pg_url: str, webhook_receiver) -> None:  # type: ignore[no-untyped-def]
    url, received = webhook_receiver
    book = (
        "Chapter One.\n\nIt was a bright cold day in April. The clocks were striking thirteen.\n\n"
        "Mr. Smith walked home slowly. He had 3 apples and 12 pears in his bag."
    )
    headers = {**_auth(api_key), "Idempotency-Key": hashlib.sha1(book.encode()).hexdigest()}
    body = {"text": book, "speaker": "joe", "format": "wav", "webhookUrl": url}
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=headers, json=body, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job_id = submitted.json()["id"]
    assert submitted.json()["status"] == "queued"

    again = httpx.post(f"{stack.api_url}/v1/jobs", headers=headers, json=body, timeout=30)
    assert again.json()["id"] == job_id  # same Idempotency-Key and body: the same job

    deadline = time.monotonic() + 240
    while True:
        job = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}", headers=_auth(api_key)).json()
        if job["status"] in ("succeeded", "failed", "canceled") or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert job["status"] == "succeeded", (job, stack.log_text("worker1")[-3000:])
    assert job["progress"]["chunksDone"] == job["progress"]["chunksTotal"] > 0

    redirect = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}/audio", headers=_auth(api_key))
    assert redirect.status_code == 307
    audio = httpx.get(redirect.headers["location"], timeout=60)
    assert audio.status_code == 200
    with wave.open(io.BytesIO(audio.content)) as wav:
        seconds = wav.getnframes() / wav.getframerate()
    assert abs(seconds - job["durationSeconds"]) < 0.05
    assert seconds > 5.0

    engine = make_engine(pg_url)
    with engine.connect() as conn:
        billed = conn.execute(
            text("SELECT count(*), sum(characters) FROM usage WHERE job_id = :j"), {"j": job_id}
        ).one()
    engine.dispose()
    assert billed[0] == job["progress"]["chunksTotal"]
    # Every character is billed once: at least all non-space characters, at most the whole text.
    assert len("".join(book.split())) <= billed[1] <= len(book)

    deadline = time.monotonic() + 30
    while not received and time.monotonic() < deadline:
        time.sleep(0.2)
    assert received, "the webhook never arrived"
    hook_headers, hook_body = received[0]
    payload = json.loads(hook_body)
    assert payload["event"] == "job.succeeded"
    assert payload["jobId"] == job_id
    secret = _account_secret(pg_url, api_key)
    assert verify(secret, hook_body, hook_headers[SIGNATURE_HEADER])
    assert not verify("wrong-secret", hook_body, hook_headers[SIGNATURE_HEADER])


def _account_secret(pg_url: str, key: str) -> str:
    from store.db.keys import hash_key

    engine = make_engine(pg_url)
    with engine.connect() as conn:
        secret = conn.execute(
            text("SELECT a.webhook_secret FROM accounts a JOIN api_keys k ON k.account_id = a.id WHERE k.key_hash = :h"),
            {"h": hash_key(key)},
        ).scalar_one()
    engine.dispose()
    return str(secret)


