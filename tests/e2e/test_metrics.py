"""``GET /metrics`` on the API moves with traffic: the whole service under ``lector serve`` (real
PostgreSQL, Redis, Swift), scraped before and after real HTTP, WebSocket and job requests."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
import websockets

from tests.support.metrics import Samples, scrape, value

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TEXT = "Metrics should move. This is the second sentence."


def total(samples: Samples, name: str) -> float:
    return sum(v for (n, _), v in samples.items() if n == name)


def test_http_traffic_moves_requests_ttfb_billing_and_engine_metrics(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    before = scrape(stack.api_url)
    headers = {"Authorization": f"Bearer {api_key}", "Accept": "audio/wav"}
    ok = httpx.post(f"{stack.api_url}/v1/service-tts", json={"text": TEXT, "speaker": "joe"}, headers=headers, timeout=60)
    assert ok.status_code == 200
    bad = httpx.post(f"{stack.api_url}/v1/service-tts", json={"speaker": "joe"}, headers=headers, timeout=60)
    assert bad.status_code == 400
    missing = httpx.get(f"{stack.api_url}/v1/jobs/not-a-job", headers=headers, timeout=30)
    after = scrape(stack.api_url)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("lector_http_requests_total", route="/v1/service-tts", status="200") == 1
    assert delta("lector_http_requests_total", route="/v1/service-tts", status="400") == 1
    # the route template, never the raw path (bounded label values)
    assert delta("lector_http_requests_total", route="/v1/jobs/{job_id}", status=str(missing.status_code)) == 1
    assert delta("lector_time_to_first_byte_seconds_count", transport="http", format="wav") == 1
    assert 0 < delta("lector_time_to_first_byte_seconds_sum", transport="http", format="wav") < 30
    assert delta("lector_characters_billed_total", model="mistv3", transport="http") == len(TEXT)
    assert delta("lector_synthesis_seconds_count", engine="vits", device="cpu") >= 2  # one call per sentence
    assert delta("lector_audio_seconds_total", engine="vits", device="cpu") > 1.5


def test_websocket_gauge_and_ws_ttfb(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    url = stack.api_url.replace("http://", "ws://") + "/ws3?speaker=joe&audioFormat=pcm"
    before = scrape(stack.api_url)

    async def session() -> Samples:
        async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {api_key}"}) as ws:
            during = await asyncio.to_thread(scrape, stack.api_url)
            await ws.send(json.dumps({"text": "Hello over a socket."}))
            await ws.send(json.dumps({"operation": "eos"}))
            with pytest.raises(websockets.ConnectionClosed):
                while True:
                    await asyncio.wait_for(ws.recv(), 30)
            return during

    during = asyncio.run(session())
    assert value(during, "lector_websocket_connections") == value(before, "lector_websocket_connections") + 1
    deadline = time.monotonic() + 10
    while value(after := scrape(stack.api_url), "lector_websocket_connections") != value(before, "lector_websocket_connections"):
        assert time.monotonic() < deadline, "the gauge did not come back down"
        time.sleep(0.1)
    assert value(after, "lector_time_to_first_byte_seconds_count", transport="ws", format="pcm") == (
        value(before, "lector_time_to_first_byte_seconds_count", transport="ws", format="pcm") + 1
    )
    assert value(after, "lector_characters_billed_total", model="mistv3", transport="ws") > value(
        before, "lector_characters_billed_total", model="mistv3", transport="ws")


def test_jobs_queue_and_durations_come_from_the_database(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    before = scrape(stack.api_url)
    assert {s for (n, labels), _ in before.items() if n == "lector_jobs" for _, s in labels} >= {
        "queued", "running", "succeeded", "failed"}
    assert ("lector_queue_depth", (("queue", "synth"),)) in before
    assert ("lector_queue_depth", (("queue", "cpu"),)) in before
    assert ("lector_jobs_stalled", ()) in before
    submitted = httpx.post(
        f"{stack.api_url}/v1/jobs", headers={"Authorization": f"Bearer {api_key}"},
        data={"speaker": "joe", "format": "wav"}, files={"file": ("t.txt", b"A tiny job. It ends here.", "text/plain")},
        timeout=30,
    )
    assert submitted.status_code == 202, submitted.text
    assert total(scrape(stack.api_url), "lector_jobs") == total(before, "lector_jobs") + 1
    deadline = time.monotonic() + 240
    while value(after := scrape(stack.api_url), "lector_jobs", state="succeeded") <= value(
        before, "lector_jobs", state="succeeded"
    ):
        assert time.monotonic() < deadline, "the job did not finish"
        time.sleep(0.5)
    assert value(after, "lector_job_duration_seconds_count") == value(before, "lector_job_duration_seconds_count") + 1
    assert value(after, "lector_job_duration_seconds_bucket", le="+Inf") == value(after, "lector_job_duration_seconds_count")
    assert value(after, "lector_job_duration_seconds_sum") > value(before, "lector_job_duration_seconds_sum")
