"""Usage spooled on disk survives an API restart while the usage endpoint is down."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request

from facade.usage_spool import UsageSpool
from tests.integration.selfhosted.conftest import Api
from tests.support.servers import ServerThread, wait_until


def usage_endpoint() -> tuple[ServerThread, list[dict[str, Any]]]:
    received: list[dict[str, Any]] = []
    lock = threading.Lock()
    app = FastAPI()

    @app.post("/usage")
    async def usage(request: Request) -> dict[str, bool]:
        body = await request.json()
        with lock:
            received.extend(body["records"])
        return {"ok": True}

    return ServerThread(app), received


def test_counts_survive_a_restart_with_the_endpoint_down(
    start_api: Callable[..., Api], joe_service: ServerThread, tmp_path: Path
) -> None:
    endpoint, received = usage_endpoint()  # port reserved, nothing listening yet
    spool_dir = tmp_path / "usage"
    config = {"model_url": joe_service.url + "/invocations", "usage_url": endpoint.url + "/usage",
              "usage_spool_dir": spool_dir}
    texts = ["First request.", "A second, longer request."]
    first = start_api(**config)
    for text in texts:
        assert first.post({"text": text, "speaker": "joe", "modelId": "mist"}, accept="audio/pcm").status_code == 200
    first.stop()  # the process goes away with the endpoint still down

    pending = UsageSpool(spool_dir, None).pending()
    assert [(r["characters"], r["model"], r["speaker"]) for r in pending] == [(len(t), "mist", "joe") for t in texts]
    assert {r["customer"] for r in pending} == {"ACME Corp"} and all(r["licenseId"] for r in pending)

    try:
        endpoint.start()
        second = start_api(**config)
        assert wait_until(lambda: len(received) >= 2, timeout=20)
        third = "Third, over HTTP JSON."
        assert second.post({"text": third, "speaker": "joe", "modelId": "mist"}).status_code == 200
        assert wait_until(lambda: len(received) >= 3, timeout=20)
        assert [r["characters"] for r in received] == [len(t) for t in (*texts, third)]
        assert len({r["id"] for r in received}) == 3
        second.stop()
        assert UsageSpool(spool_dir, None).pending() == []
    finally:
        endpoint.close()
