"""The self-hosted API serves ``/metrics`` too, and it moves with its traffic; the model
service's own ``/metrics`` counts the batches that served it."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.selfhosted.conftest import Api
from tests.support.servers import ServerThread

BODY = {"text": "Counted by the metrics.", "speaker": "joe", "modelId": "mist", "lang": "en"}


def _value(url: str, name: str, **labels: str) -> float:
    text = httpx.get(url + "/metrics", timeout=10).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    return 0.0


@pytest.fixture
def api(start_api: Callable[..., Api], joe_service: ServerThread) -> Api:
    return start_api(model_url=joe_service.url + "/invocations")


def test_self_hosted_metrics_move_with_a_request(api: Api, joe_service: ServerThread) -> None:
    requests = ("lector_http_requests_total", {"route": "/", "status": "200"})
    billed = ("lector_characters_billed_total", {"model": "mist", "transport": "http"})
    before = [_value(api.url, name, **labels) for name, labels in (requests, billed)]
    batches = _value(joe_service.url, "lector_model_batch_size_count")
    response = api.post(BODY, accept="audio/wav")
    assert response.status_code == 200, response.text
    after = [_value(api.url, name, **labels) for name, labels in (requests, billed)]
    assert after[0] == before[0] + 1
    assert after[1] == before[1] + len(BODY["text"])
    assert _value(joe_service.url, "lector_model_batch_size_count") > batches
