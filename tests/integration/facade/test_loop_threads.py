"""The API's event loop never waits on a thread being started or a source file being read: a
burst of WebSocket opens and authenticated requests, over real sockets to a real uvicorn, with
auth on real PostgreSQL and connection counts on real Redis. Either would stall every other
request on the loop (``facade.thread_pool``, ``facade.app.warm_route_context``)."""

from __future__ import annotations

import asyncio
import inspect
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis
import websockets
from sqlalchemy import Engine

from facade.app import create_app
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from store.db.session import make_sessionmaker
from tests.support.fake_engine import ToneEngine
from tests.support.servers import ServerThread
from tests.support.services import services_with_key

BURST = 24


@pytest.fixture
def served(db_engine: Engine, redis_client: redis.Redis) -> Iterator[tuple[ServerThread, str]]:
    """Sessions on the engine's pool, not the test's one connection: the burst authenticates on
    many threads at once, as the API does."""
    engine = ToneEngine()
    services, key = services_with_key(make_sessionmaker(db_engine), f"loop-threads-{uuid.uuid4().hex[:8]}", catalog=Catalog.load(),
                                      synthesizer=Synthesizer(lambda voice: engine), redis=redis_client)
    server = ServerThread(create_app(lambda: (services, lambda: None))).start()
    try:
        yield server, key
    finally:
        server.close()


def _on_loop_thread(server: ServerThread) -> bool:
    return threading.current_thread() is server.thread


async def test_a_burst_of_opens_and_requests_starts_no_thread_on_the_loop(
    served: tuple[ServerThread, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, key = served
    on_loop: list[str] = []
    real_start, real_sourcelines = threading.Thread.start, inspect.getsourcelines

    def start(thread: threading.Thread) -> None:
        if _on_loop_thread(server):
            on_loop.append(f"Thread.start({thread.name})")
        real_start(thread)

    def sourcelines(obj: Any) -> Any:
        if _on_loop_thread(server):
            on_loop.append(f"getsourcelines({getattr(obj, '__name__', obj)})")
        return real_sourcelines(obj)

    monkeypatch.setattr(threading.Thread, "start", start)
    monkeypatch.setattr(inspect, "getsourcelines", sourcelines)
    ws_url = server.url.replace("http://", "ws://")
    headers = {"Authorization": f"Bearer {key}"}

    async def open_socket(path: str) -> None:
        async with websockets.connect(f"{ws_url}{path}?speaker=joe", additional_headers=headers) as ws:
            await ws.ping()

    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=30) as client:

        async def textnorm(n: int) -> int:
            reply = await client.post("/textnorm", json={"text": f"{n} cats", "lang": "en"})
            return reply.status_code

        paths = ("/ws3", "/ws2", "/ws")
        _, statuses = await asyncio.gather(
            asyncio.gather(*(open_socket(paths[n % 3]) for n in range(BURST))),
            asyncio.gather(*(textnorm(n) for n in range(BURST))),
        )
        voices = await client.get("/data/voices/all-v2.json")
    assert set(statuses) == {200} and voices.status_code == 200
    assert on_loop == []
