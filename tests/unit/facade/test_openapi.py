"""``/openapi.json`` documents the hand-parsed bodies, the vendor API contract's errors, every Accept value and
the WebSockets, and a client built from it would send what the routes accept."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from facade import job_request
from facade.app import create_app
from facade.deps import Services, Speech
from facade.job_request import JobRequest


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    services = Services(speech=Speech(catalog=None, synthesizer=None))  # type: ignore[arg-type]
    app = create_app(lambda: (services, lambda: None))
    response = TestClient(app).get("/openapi.json")  # the document only: no lifespan, nothing served
    assert response.status_code == 200
    return response.json()  # type: ignore[no-any-return]


@pytest.mark.parametrize("path", ["/v1/service-tts", "/v1/jobs", "/oov", "/textnorm", "/phonemize"])
def test_hand_parsed_bodies_have_schemas(spec: dict[str, Any], path: str) -> None:
    operation = spec["paths"][path]["post"]
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    assert "text" in schema["properties"]
    assert "400" in operation["responses"] and "401" in operation["responses"]
    assert "422" not in operation["responses"]  # never sent: bad bodies get the vendor API contract's 400s


def test_synthesis_lists_every_accept_value_and_the_contract_s_statuses(spec: dict[str, Any]) -> None:
    operation = spec["paths"]["/v1/service-tts"]["post"]
    content = operation["responses"]["200"]["content"]
    for accept in ("audio/webm;codecs=opus", "audio/ogg;codecs=opus", "audio/mpeg", "audio/wav", "audio/L16",
                   "audio/PCMU", "audio/mp3", "audio/pcm", "audio/x-mulaw"):
        assert accept in content
    assert {"400", "401", "403", "406", "500"} <= set(operation["responses"])
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    assert schema["required"] == ["text", "speaker"] and schema["properties"]["text"]["maxLength"] == 1000


def test_textnorm_errors_are_documented_as_json(spec: dict[str, Any]) -> None:
    responses = spec["paths"]["/textnorm"]["post"]["responses"]
    assert "application/json" in responses["502"]["content"]


def test_websockets_are_described(spec: dict[str, Any]) -> None:
    assert set(spec["x-websockets"]) == {"/ws3", "/ws2", "/ws"}
    assert "1011" in spec["x-websockets"]["/ws3"]["description"]


def test_the_job_body_schema_is_generated_from_the_model(spec: dict[str, Any]) -> None:
    """The job's own options are documented by ``JobRequest`` itself: a field added to the model
    is in the document, with its type and bounds, and a field dropped from it is not."""
    content = spec["paths"]["/v1/jobs"]["post"]["requestBody"]["content"]
    properties = content["application/json"]["schema"]["properties"]
    generated = JobRequest.model_json_schema(by_alias=True)["properties"]
    for name, schema in generated.items():
        assert properties[name] == schema, name
    assert properties["loudness"]["anyOf"][0]["minimum"] == job_request.LOUDNESS_RANGE[0]
    assert properties["format"]["enum"] == list(job_request.FORMAT_NAMES)
    assert {"speaker", "samplingRate", "webhookUrl", "loudnessScope", "pauses", "delivery"} <= set(properties)
    assert "cover" not in properties  # a file part of the form only
    form = content["multipart/form-data"]["schema"]["properties"]
    assert form["file"]["format"] == "binary" and form["cover"]["format"] == "binary"
