"""Concurrent self-hosted requests reach the model service together and run as batches."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable

import httpx

from speech.engines.base import Engine
from tests.integration.selfhosted.conftest import Api, model_service


def test_sixteen_concurrent_requests_run_in_fewer_batches(start_api: Callable[..., Api], joe_engine: Engine) -> None:
    model = model_service(joe_engine, "joe", window_ms=20, max_batch=16)
    try:
        api = start_api(model_url=model.url + "/invocations")
        before = httpx.get(model.url + "/stats").json()
        texts = [f"This is request number {n}." for n in range(16)]
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            responses = list(pool.map(lambda t: api.post({"text": t, "speaker": "joe", "modelId": "mist"},
                                                         accept="audio/pcm"), texts))
        after = httpx.get(model.url + "/stats").json()
        assert all(r.status_code == 200 and len(r.content) > 10000 for r in responses)
        items, batches = after["items"] - before["items"], after["batches"] - before["batches"]
        assert items == 16
        assert batches < 16, after
        assert after["largest"] > 1
    finally:
        model.close()
