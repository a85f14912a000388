"""One rule of a billed character on every transport (docs/api.md, "Billed characters"): the same
text, hard-wrapped with CRLF line ends, indentation and a blank line between paragraphs (the
opening of *Pride and Prejudice* as Project Gutenberg ships it), bills the same count streamed
over HTTP, through the OpenAI route, over ``/ws3`` sentence by sentence, over the raw ``/ws``,
and read as a book job, against the whole service (``lector serve`` and a worker, PostgreSQL,
Swift). Each transport bills a fresh account, so the rows counted are its own."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from speech.billing import billed_characters
from store.db.keys import authenticate
from store.db.session import make_engine, make_sessionmaker, session_scope
from tests.fixtures.ledger import direct_sums
from tests.fixtures.stack import make_key

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BOOK = Path(__file__).resolve().parents[1] / "data" / "pride_and_prejudice.txt"


def _opening() -> str:
    raw = BOOK.read_bytes().decode("utf-8-sig")
    start = raw.index("It is a truth universally")
    end = raw.index("daughters.", start) + len("daughters.")
    return raw[start:end]


TEXT = _opening()


def _billed(pg_url: str, key: str) -> dict[str, int]:
    """Characters billed to the key's account, by transport, summed from the raw usage rows."""
    engine = make_engine(pg_url)
    try:
        with session_scope(make_sessionmaker(engine)) as session:
            account, _ = authenticate(session=session, key=key)
            now = datetime.now(UTC)
            sums = direct_sums(session, start=now - timedelta(days=1), end=now + timedelta(days=1),
                               group_by=("transport",), account_id=account.id)
    finally:
        engine.dispose()
    return {str(transport): characters for (transport,), (_, characters, _) in sums.items()}


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _ws_url(stack: Any, path: str) -> str:
    return stack.api_url.replace("http://", "ws://") + path + "?speaker=joe&audioFormat=pcm&samplingRate=16000"


async def _ws3_sentence_by_sentence(stack: Any, key: str) -> None:
    """As LiveKit's plugin sends a turn: what it has, piece by piece, then one flush."""
    async with websockets.connect(_ws_url(stack, "/ws3"), additional_headers=_auth(key)) as ws:
        for line in TEXT.splitlines(keepends=True):
            await ws.send(json.dumps({"text": line}))
        await ws.send(json.dumps({"operation": "flush"}))
        audio = b""
        while (event := json.loads(await asyncio.wait_for(ws.recv(), 120)))["type"] != "done":
            if event["type"] == "chunk":
                audio += base64.b64decode(event["data"])
    assert len(audio) / 2 / 16000 > 5  # the whole passage was spoken


async def _raw_ws(stack: Any, key: str) -> None:
    async with websockets.connect(_ws_url(stack, "/ws"), additional_headers=_auth(key)) as ws:
        await ws.send(TEXT)
        await ws.send("<EOS>")
        audio = b""
        with pytest.raises(ConnectionClosed):
            while True:
                audio += await asyncio.wait_for(ws.recv(), 120)
    assert len(audio) / 2 / 16000 > 5


def _job(stack: Any, key: str) -> dict[str, Any]:
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(key),
                           json={"text": TEXT, "speaker": "joe", "format": "mp3"}, timeout=60)
    assert submitted.status_code == 202, submitted.text
    deadline = time.monotonic() + 300
    while (job := httpx.get(f"{stack.api_url}/v1/jobs/{submitted.json()['id']}", headers=_auth(key),
                            timeout=30).json())["status"] not in ("succeeded", "failed", "canceled"):
        assert time.monotonic() < deadline, stack.log_text("worker1")[-3000:]
        time.sleep(0.5)
    assert job["status"] == "succeeded", job
    assert job["progress"]["chunksTotal"] >= 2  # two paragraphs: the chunks carry the break between them
    return job


def test_the_same_text_bills_the_same_on_every_transport(stack, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    expected = billed_characters(TEXT)
    # The passage's layout is what the rule is about: its raw length is far longer.
    assert len(TEXT) - expected > 40 and "\r\n\r\n" in TEXT

    http_key = make_key(pg_url, "bill-http")
    spoken = httpx.post(f"{stack.api_url}/v1/service-tts", headers={**_auth(http_key), "Accept": "audio/wav"},
                        json={"text": TEXT, "speaker": "joe"}, timeout=120)
    assert spoken.status_code == 200 and len(spoken.content) > 100_000, spoken.text[:200]

    openai_key = make_key(pg_url, "bill-openai")
    client = openai.OpenAI(api_key=openai_key, base_url=f"{stack.api_url}/v1", max_retries=0, timeout=120)
    assert len(client.audio.speech.create(model="tts-1", voice="joe", input=TEXT, response_format="wav").read()) > 100_000

    ws3_key, raw_key = make_key(pg_url, "bill-ws3"), make_key(pg_url, "bill-ws")
    asyncio.run(_ws3_sentence_by_sentence(stack, ws3_key))
    asyncio.run(_raw_ws(stack, raw_key))

    job_key = make_key(pg_url, "bill-job")
    job = _job(stack, job_key)

    billed = {
        "/v1/service-tts": _billed(pg_url, http_key),
        "/v1/audio/speech": _billed(pg_url, openai_key),
        "/ws3": _billed(pg_url, ws3_key),
        "/ws": _billed(pg_url, raw_key),
        "job": _billed(pg_url, job_key),
    }
    assert billed == {
        "/v1/service-tts": {"http": expected},
        "/v1/audio/speech": {"http": expected},
        "/ws3": {"ws": expected},
        "/ws": {"ws": expected},
        "job": {"job": expected},
    }
    # The job shows the count: what its text bills whole, and what its chunks billed.
    assert job["characters"] == job["billedCharacters"] == expected
