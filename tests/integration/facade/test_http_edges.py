"""The HTTP edges against hostile or unlucky clients, over real sockets (uvicorn on loopback):
the body cap and its deadline, a hang-up mid-upload, ``Accept`` rates, empty and echoed input,
JSON failures of ``/textnorm`` and ``/phonemize``. Auth and billing run on real PostgreSQL; the
voice is a tone engine (no neural weights needed to test the edges)."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy.orm import Session, sessionmaker

from facade.app import create_app
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from tests.support.fake_engine import ToneEngine
from tests.support.servers import ServerThread, wait_until
from tests.support.services import services_with_key

CAP = 64 * 1024


@pytest.fixture
def served(db_sessionmaker: sessionmaker[Session]) -> Iterator[tuple[str, str]]:
    services, key = services_with_key(
        db_sessionmaker, "edges", catalog=Catalog.load(), synthesizer=Synthesizer(lambda voice: ToneEngine())
    )
    app = create_app(lambda: (services, lambda: None), max_body_bytes=CAP, body_timeout_s=1.5)
    server = ServerThread(app).start()
    try:
        yield server.url, key
    finally:
        server.close()


def _raw(url: str, head: bytes, body: bytes = b"", *, wait_s: float = 5.0) -> tuple[bytes, float]:
    """Send ``head`` and part of a body on a raw socket; the answer and how long it took."""
    host, port = url.removeprefix("http://").split(":")
    started = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=wait_s) as sock:
        sock.sendall(head + body)
        data = b""
        try:
            while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) == 0:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        except TimeoutError:
            pass
    return data, time.monotonic() - started


def _head(key: str, length: int, path: str = "/v1/service-tts") -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n").encode()


def test_a_declared_length_over_the_cap_is_413_at_once(served: tuple[str, str]) -> None:
    url, key = served
    answer, took = _raw(url, _head(key, 60 * 1024 * 1024), b"x" * 1024)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"text/plain" in answer and f"at most {CAP} bytes".encode() in answer
    assert took < 2.0


def test_a_chunked_body_over_the_cap_is_413(served: tuple[str, str]) -> None:
    url, key = served

    def chunks() -> Iterator[bytes]:
        for _ in range(40):
            yield b"x" * 4096

    response = httpx.post(f"{url}/v1/service-tts", content=chunks(), headers={"Authorization": f"Bearer {key}"})
    assert (response.status_code, response.text) == (413, f"request body is too large (at most {CAP} bytes)")


def test_a_slow_body_meets_its_deadline(served: tuple[str, str]) -> None:
    url, key = served
    answer, took = _raw(url, _head(key, 1000), b'{"text": "', wait_s=8.0)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert answer.endswith(b"request body was not received in time")
    assert 1.0 < took < 5.0


def test_a_book_sized_body_passes_the_default_cap(db_sessionmaker: sessionmaker[Session]) -> None:
    """2,000,000 characters fit under the default cap: the route reads them and says "too long"."""
    services, key = services_with_key(db_sessionmaker, "edges-big", catalog=Catalog.load(),
                                      synthesizer=Synthesizer(lambda voice: ToneEngine()))
    server = ServerThread(create_app(lambda: (services, lambda: None))).start()
    try:
        body = json.dumps({"text": "é" * 2_000_000, "speaker": "joe"}, ensure_ascii=True).encode()
        assert len(body) > 12_000_000
        response = httpx.post(f"{server.url}/v1/service-tts", content=body, timeout=60,
                              headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
        assert (response.status_code, response.text) == (400, "text is too long")
    finally:
        server.close()


def test_a_hang_up_mid_upload_is_one_quiet_line(served: tuple[str, str], caplog: pytest.LogCaptureFixture) -> None:
    url, key = served
    caplog.set_level(logging.INFO)
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(_head(key, 5000) + b'{"text": "abc')
        time.sleep(0.3)
    assert wait_until(lambda: any("client disconnected" in r.getMessage() for r in caplog.records), timeout=5)
    time.sleep(0.3)
    facade = [r for r in caplog.records if r.name.startswith("lector") and r.name != "lector.access"]  # the access line is its own
    assert [r.getMessage() for r in facade] == ["client disconnected: /v1/service-tts"]
    assert all(r.exc_info is None and r.levelno < logging.WARNING for r in facade)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("rate", ["1", "1000000", "0", "-8000", "fast"])
def test_an_accept_rate_obeys_the_sampling_rate_bounds(served: tuple[str, str], rate: str) -> None:
    """The answer is the one ``samplingRate`` with the same value gets, status and message."""
    url, key = served
    response = httpx.post(f"{url}/v1/service-tts", json={"text": "Hello there.", "speaker": "joe"},
                          headers={"Authorization": f"Bearer {key}", "Accept": f"audio/L16;rate={rate}"})
    as_field = httpx.post(f"{url}/v1/service-tts", json={"text": "Hello there.", "speaker": "joe", "samplingRate": rate},
                          headers={"Authorization": f"Bearer {key}"})
    assert (response.status_code, response.text) == (as_field.status_code, as_field.text)
    assert response.status_code == 400 and response.text.startswith("samplingRate must be")


def test_an_accept_rate_in_bounds_is_used(served: tuple[str, str]) -> None:
    url, key = served
    response = httpx.post(f"{url}/v1/service-tts", json={"text": "Hello there.", "speaker": "joe"},
                          headers={"Authorization": f"Bearer {key}", "Accept": "audio/L16;rate=8000"})
    assert response.status_code == 200 and "rate=8000" in response.headers["content-type"]


@pytest.mark.parametrize("text", ["   ", "\n\t \r\n", "\x00\x01\x02", " \x7f "])
def test_text_with_nothing_to_say_is_400(served: tuple[str, str], text: str) -> None:
    url, key = served
    response = httpx.post(f"{url}/v1/service-tts", json={"text": text, "speaker": "joe"},
                          headers={"Authorization": f"Bearer {key}", "Accept": "audio/wav"})
    assert (response.status_code, response.text) == (400, "text must not be empty")


def test_echoed_input_is_cut_short(served: tuple[str, str]) -> None:
    url, key = served
    response = httpx.post(f"{url}/v1/service-tts", json={"text": "Hi.", "speaker": "z" * 10_000},
                          headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 400 and response.text.startswith("speaker zzz")
    assert len(response.text) < 200 and "..." in response.text


@pytest.mark.parametrize("path", ["/textnorm", "/phonemize"])
def test_utility_failures_are_json(served: tuple[str, str], path: str) -> None:
    url, key = served
    wrong_method = httpx.get(f"{url}{path}", headers={"Authorization": f"Bearer {key}"})
    assert (wrong_method.status_code, wrong_method.json()) == (405, {"error": "method not allowed"})
    too_big = httpx.post(f"{url}{path}", content=b"x" * (CAP + 1), headers={"Authorization": f"Bearer {key}"})
    assert too_big.status_code == 413 and too_big.json() == {"error": f"request body is too large (at most {CAP} bytes)"}
    empty = httpx.post(f"{url}{path}", json={"text": "  "}, headers={"Authorization": f"Bearer {key}"})
    assert empty.status_code == 400 and empty.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize(("slots", "expected"), [(2, 2), (0, 8)])
async def test_engine_slots_bound_concurrent_synthesis_steps(slots: int, expected: int) -> None:
    """Eight streams' steps at once: with two slots, two run and six wait (on the event loop,
    holding no thread); with none, all eight run."""
    import asyncio

    from facade.deps import Services, Speech
    from facade.request_resolution import in_engine_thread
    from facade.serving_pools import ServingPools
    from tests.support.concurrency import PeakCounter

    steps = PeakCounter()
    services = Services(speech=Speech(catalog=None, synthesizer=None),  # type: ignore[arg-type]
                        pools=ServingPools(engine_slots=slots))
    close = services.pools.open()  # as the app's lifespan does
    try:
        await asyncio.gather(*(in_engine_thread(services, steps.hold, 0.1) for _ in range(8)))
    finally:
        close()
    assert steps.peak == expected
