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
