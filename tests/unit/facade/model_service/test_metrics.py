"""The model service's ``GET /metrics``, on the app as ``lector model-server`` serves it, moves
with traffic: requests by route and status, batch sizes from the batcher, and the engine metrics
recorded by the wrapper ``lector.wiring`` puts around every loaded engine."""

from __future__ import annotations

import concurrent.futures

import httpx
from prometheus_client.parser import text_string_to_metric_families

from lector.commands.model_server import serving_app
from lector.engine_metrics import instrument
from tests.support.fake_engine import ToneEngine
from tests.support.servers import ServerThread, wait_until


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = httpx.get(url + "/metrics", timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(response.text) for s in family.samples
    }


def test_metrics_move_with_invocations() -> None:
    engine = instrument(ToneEngine(delay_s=0.3), kind="tone", device="cpu")  # long enough that requests queue behind a pass, even on a busy machine
    with ServerThread(serving_app(engine_factory=lambda: engine, voice="tone", window_ms=30, max_batch=8)) as server:
        assert wait_until(lambda: httpx.get(server.url + "/readyz").status_code == 200, timeout=10)
        before = scrape(server.url)
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            answers = list(pool.map(
                lambda i: httpx.post(server.url + "/invocations", json={"sentences": [f"Sentence {i}."]}, timeout=30),
                range(6),
            ))
        assert all(a.status_code == 200 for a in answers)
        refused = httpx.post(server.url + "/invocations", json={"voice": "nobody", "sentences": ["Hi."]}, timeout=30)
        assert refused.status_code == 400
        after = scrape(server.url)

    def delta(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert delta("lector_http_requests_total", route="/invocations", status="200") == 6
    assert delta("lector_http_requests_total", route="/invocations", status="400") == 1
    assert delta("lector_http_requests_total", route="/metrics", status="200") == 1  # the first scrape
    assert delta("lector_model_batch_size_sum") == 6  # every sentence ran in some batch
    assert 1 <= delta("lector_model_batch_size_count") < 6  # and some ran together
    calls = delta("lector_synthesis_seconds_count", engine="tone", device="cpu")
    assert calls == delta("lector_model_batch_size_count")  # one timed engine call per batch
    assert delta("lector_synthesis_seconds_sum", engine="tone", device="cpu") >= 0.3 * calls
    assert delta("lector_audio_seconds_total", engine="tone", device="cpu") > 0
