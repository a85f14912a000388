"""The customer's webhook receiver is down when the job finishes, then comes up: the callback
still arrives (retried with backoff), every attempt is recorded, and the API's
``lector_webhook_attempts_total`` counts them by outcome."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import httpx
import pytest
from sqlalchemy import text

from store.db.session import make_engine
from tests.support.metrics import scrape, value
from tests.support.servers import free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]


class _Hook(BaseHTTPRequestHandler):
    bodies: list[bytes] = []

    def do_POST(self) -> None:  # noqa: N802
        type(self).bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def _attempts(pg_url: str, job_id: str) -> list[tuple[int, bool, int | None]]:
    engine = make_engine(pg_url)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT attempt, delivered, status_code FROM webhook_attempts WHERE job_id = :j "
                                 "ORDER BY id"), {"j": job_id}).all()
    engine.dispose()
    return [tuple(r) for r in rows]  # type: ignore[misc]


def test_webhook_arrives_after_the_receiver_comes_back(stack, api_key: str, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    before = scrape(stack.api_url)
    response = httpx.post(f"{stack.api_url}/v1/jobs", headers={"Authorization": f"Bearer {api_key}"},
                          json={"text": "A short job.", "speaker": "joe", "webhookUrl": f"http://127.0.0.1:{port}/hook"})
    job_id = response.json()["id"]
    deadline = time.monotonic() + 120
    while not _attempts(pg_url, job_id):
        assert time.monotonic() < deadline, "no delivery attempt was made"
        time.sleep(0.3)
    assert _attempts(pg_url, job_id)[0][1] is False  # nobody listening yet

    _Hook.bodies = []
    server = HTTPServer(("127.0.0.1", port), _Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        deadline = time.monotonic() + 60
        while not _Hook.bodies:
            assert time.monotonic() < deadline, _attempts(pg_url, job_id)
            time.sleep(0.3)
    finally:
        server.shutdown()
    attempts = _attempts(pg_url, job_id)
    assert attempts[-1][1:] == (True, 200)
    assert [a[0] for a in attempts] == list(range(1, len(attempts) + 1))
    assert len(_Hook.bodies) == 1
    after = scrape(stack.api_url)  # read from PostgreSQL at scrape time; other jobs' retries may add to it
    failed = sum(not a[1] for a in attempts)
    assert failed >= 1
    assert value(after, "lector_webhook_attempts_total", outcome="failed") >= value(
        before, "lector_webhook_attempts_total", outcome="failed") + failed
    assert value(after, "lector_webhook_attempts_total", outcome="delivered") >= value(
        before, "lector_webhook_attempts_total", outcome="delivered") + 1
