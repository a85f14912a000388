"""A fuzz pass over the public endpoints: random JSON shapes, odd types, random bytes and odd
Unicode. Whatever comes in, the answer is a 2xx or a 4xx, never a 5xx."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.integration, pytest.mark.slow]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=6,
)
fields = st.sampled_from(["text", "speaker", "modelId", "lang", "samplingRate", "timeScaleFactor", "speedAlpha",
                          "audioFormat", "noTextNormalization", "pauseBetweenBrackets", "phonemizeBetweenBrackets",
                          "inlineSpeedAlpha", "reduceLatency"])
short_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=40)
bodies = st.fixed_dictionaries(
    {"text": short_text, "speaker": st.sampled_from(["joe", "mateo", "nobody", ""])},
    optional={"modelId": st.sampled_from(["mistv3", "mistv2", "mist", "coda", "arcana", "nope"]) | json_values,
              "lang": st.sampled_from(["en", "eng", "es", "ja", "xx", "deu"]) | json_values,
              "samplingRate": st.sampled_from([8000, 16000, 22050, 24000, 44100, 0, -5, 10**9]) | json_values,
              "timeScaleFactor": json_values, "speedAlpha": json_values, "audioFormat": json_values,
              "inlineSpeedAlpha": json_values, "pauseBetweenBrackets": json_values},
) | st.dictionaries(fields, json_values, max_size=5)
accepts = st.sampled_from(["", "*/*", "audio/wav", "audio/mpeg", "audio/PCMU", "application/json", "text/event-stream",
                           "audio/ogg;codecs=opus", "audio/webm;codecs=opus;q=0.5, audio/L16;q=0.9", "garbage/;;q=x"])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies, accept=accepts)
def test_service_tts_never_5xx(stack, api_key: str, body: dict[str, object], accept: str) -> None:  # type: ignore[no-untyped-def]
    response = httpx.post(f"{stack.api_url}/v1/service-tts", json=body, timeout=60,
                          headers={"Authorization": f"Bearer {api_key}", "Accept": accept})
    assert response.status_code < 500, (body, accept, response.status_code, response.text)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=200), path=st.sampled_from(["/v1/service-tts", "/v1/jobs", "/textnorm", "/oov", "/phonemize"]))
def test_random_bytes_never_5xx(stack, api_key: str, raw: bytes, path: str) -> None:  # type: ignore[no-untyped-def]
    response = httpx.post(f"{stack.api_url}{path}", content=raw, timeout=60,
                          headers={"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"})
    assert response.status_code < 500, (raw, path, response.status_code, response.text)


def _from_schema(schema: dict[str, object]) -> st.SearchStrategy[object]:
    """Values a client built from ``/openapi.json`` could send, and off-type ones beside them."""
    kind = schema.get("type")
    if "enum" in schema:
        typed: st.SearchStrategy[object] = st.sampled_from(list(schema["enum"]))  # type: ignore[arg-type]
    elif kind == "string":
        typed = st.text(min_size=1 if schema.get("minLength") else 0, max_size=60)
    elif kind == "integer":
        typed = st.integers(min_value=-(10**6), max_value=10**6)
    elif kind == "number":
        typed = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)
    elif kind == "boolean":
        typed = st.booleans()
    elif kind == "object" and isinstance(schema.get("properties"), dict):
        props: dict[str, dict[str, object]] = schema["properties"]  # type: ignore[assignment]
        required = set(schema.get("required", []))  # type: ignore[arg-type]
        typed = st.fixed_dictionaries({k: _from_schema(v) for k, v in props.items() if k in required},
                                      optional={k: _from_schema(v) for k, v in props.items() if k not in required})
    else:
        typed = json_values
    return typed | json_values if kind != "object" else typed


@pytest.fixture(scope="module")
def request_schemas(stack) -> dict[str, dict[str, object]]:  # type: ignore[no-untyped-def]
    spec = httpx.get(f"{stack.api_url}/openapi.json", timeout=30).json()
    return {path: ops["post"]["requestBody"]["content"]["application/json"]["schema"]
            for path, ops in spec["paths"].items() if "post" in ops and "requestBody" in ops["post"]
            and not path.startswith("/admin")}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), accept=accepts)
def test_bodies_from_the_openapi_schemas_never_5xx(stack, api_key: str, request_schemas, data, accept: str) -> None:  # type: ignore[no-untyped-def]
    path = data.draw(st.sampled_from(sorted(request_schemas)))
    body = data.draw(_from_schema(request_schemas[path]))
    if path == "/v1/jobs" and isinstance(body, dict):
        body.pop("webhookUrl", None)  # a job is queued work: keep the fuzz from enqueueing callbacks
    response = httpx.post(f"{stack.api_url}{path}", json=body, timeout=60,
                          headers={"Authorization": f"Bearer {api_key}", "Accept": accept})
    assert response.status_code < 500, (path, body, accept, response.status_code, response.text)
