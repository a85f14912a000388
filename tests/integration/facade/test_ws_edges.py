"""The WebSockets' flush, clear and eos, driven by a real client over a real uvicorn socket;
auth on real PostgreSQL, connection counts on real Redis, a tone engine that records what it
was asked to say (so a dropped run is seen not to be synthesized at all)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
import redis
import websockets
from sqlalchemy.orm import Session, sessionmaker
from websockets.exceptions import ConnectionClosed

from facade import ratelimit
from facade.app import create_app
from facade.deps import Principal
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from tests.support.fake_engine import ToneEngine
from tests.support.servers import ServerThread
from tests.support.services import services_with_key


@pytest.fixture
def served(db_sessionmaker: sessionmaker[Session], redis_client: redis.Redis) -> Iterator[tuple[str, str, ToneEngine]]:
    engine = ToneEngine(delay_s=0.4)
    services, key = services_with_key(db_sessionmaker, "ws-edges", catalog=Catalog.load(),
                                      synthesizer=Synthesizer(lambda voice: engine), redis=redis_client)
    server = ServerThread(create_app(lambda: (services, lambda: None))).start()
    try:
        yield server.url.replace("http://", "ws://"), key, engine
    finally:
        server.close()


async def _until(ws: Any, kind: str, timeout: float = 10) -> list[dict[str, Any]]:
    events = []
    while not events or events[-1]["type"] != kind:
        events.append(json.loads(await asyncio.wait_for(ws.recv(), timeout)))
    return events


@pytest.mark.parametrize("path", ["/ws3", "/ws2"])
async def test_every_flush_ends_with_done(served: tuple[str, str, ToneEngine], path: str) -> None:
    url, key, _ = served
    async with websockets.connect(f"{url}{path}?speaker=joe&segment=never",
                                  additional_headers={"Authorization": f"Bearer {key}"}) as ws:
        await ws.send(json.dumps({"operation": "flush", "contextId": "a"}))  # nothing ever sent
        assert await _until(ws, "done", 5) == [{"type": "done", "contextId": "a"}]
        await ws.send(json.dumps({"text": "Dropped at once. ", "contextId": "b"}))
        await ws.send(json.dumps({"operation": "clear"}))
        await ws.send(json.dumps({"operation": "flush"}))  # right after clear
        assert (await _until(ws, "done", 5))[-1] == {"type": "done", "contextId": "b"}
        await ws.send(json.dumps({"text": "   "}))
        await ws.send(json.dumps({"operation": "flush"}))  # only whitespace buffered
        events = await _until(ws, "done", 5)
        assert [e["type"] for e in events] == ["error", "done"] and events[0]["message"] == "text must not be empty"
        await ws.send(json.dumps({"operation": "flush"}))
        await ws.send(json.dumps({"operation": "flush"}))
        assert len(await _until(ws, "done", 5)) == 1 and len(await _until(ws, "done", 5)) == 1
        await ws.send(json.dumps({"text": "* * *"}))  # normalises away
        await ws.send(json.dumps({"operation": "flush"}))
        events = await _until(ws, "done", 5)
        assert [e["type"] for e in events] == ["error", "done"] and events[0]["message"] == "text must not be empty"
        await ws.send(json.dumps({"text": "Still open."}))
        await ws.send(json.dumps({"operation": "flush"}))
        assert [e["type"] for e in await _until(ws, "done", 5)][0] == "chunk"  # the socket stayed


@pytest.mark.parametrize(("path", "say", "clear", "end"), [
    ("/ws", "{}", "<CLEAR>", "<EOS>"),
    ("/ws3", "{{\"text\": \"{} \"}}", json.dumps({"operation": "clear"}), json.dumps({"operation": "eos"})),
])
async def test_clear_drops_the_queued_runs(served: tuple[str, str, ToneEngine], path: str, say: str, clear: str,
                                           end: str) -> None:
    """Three sentences are queued as three runs behind a slow engine; a clear while the first is
    in flight means the other two are never synthesized, on the raw socket as on ``/ws3``."""
    url, key, engine = served
    async with websockets.connect(f"{url}{path}?speaker=joe&segment=bySentence",
                                  additional_headers={"Authorization": f"Bearer {key}"}) as ws:
        for sentence in ("First one.", "Second one.", "Third one."):
            await ws.send(say.format(sentence))
        await asyncio.sleep(0.2)  # the first run is in the engine (0.4 s a call)
        await ws.send(clear)
        await ws.send(end)
        with pytest.raises(ConnectionClosed):
            while True:
                await asyncio.wait_for(ws.recv(), 10)
    spoken = [s for sentences, _ in engine.calls for s in sentences]
    assert not [s for s in spoken if "Second" in s or "Third" in s], spoken
    assert any("First" in s for s in spoken) or not spoken


def test_the_in_process_connection_counter_is_bounded() -> None:
    """Without Redis (self-hosted), counts older than the previous minute are dropped."""
    principal = Principal(account_id=None, api_key_id=None, account_name="", allowed_models=None,
                          allowed_endpoints=None, ws_connections_per_minute=5, webhook_secret="")
    services: Any = SimpleNamespace(brokers=SimpleNamespace(redis=None))
    ratelimit._local.clear()
    for minute in range(500):
        for account in range(20):
            principal.account_name = f"acct-{account}"
            ratelimit._allow_sync(services, principal, now=minute * 60.0 + 1)
    assert len(ratelimit._local) <= 2
    assert sum(len(accounts) for accounts in ratelimit._local.values()) <= 40
    principal.account_name = "acct-0"
    allowed = [ratelimit._allow_sync(services, principal, now=600 * 60.0 + 1) for _ in range(6)]
    assert allowed == [True] * 5 + [False]  # the limit still holds
