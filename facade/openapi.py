"""What ``/openapi.json`` says about the routes that read their bodies themselves.

The synthesis routes parse the raw body by hand, because the vendor API contract's exact plain-text
errors ("payload must be an object", "text must be a string", ...) cannot come out of FastAPI's
model validation; the job route reads JSON or a multipart form, the vendor's fields by the same
hand parser and its own options by a pydantic model (``facade.job_request``), whose schema is
generated here. So FastAPI sees no request model there; this module adds the schemas, the
media types each route answers with, the vendor API contract's error statuses, and the WebSockets (which
OpenAPI cannot describe) as an ``x-websockets`` extension. One place, applied once per app.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from facade import job_request
from speech.audio import DEPRECATED_ALIASES, supported_accept_list

_MODELS = ["coda", "mistv3", "mistv2", "mist", "arcana"]
_LANGS = ["en", "es", "fr", "pt", "de", "ja", "ar", "hi", "it", "nl",
          "eng", "spa", "fra", "por", "ger", "deu", "jpn", "ara", "hin", "ita", "nld"]

SYNTHESIS_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["text", "speaker"],
    "properties": {
        "text": {"type": "string", "minLength": 1, "maxLength": 1000},
        "speaker": {"type": "string", "description": "a voice of the selected model (GET /data/voices/all-v2.json)"},
        "modelId": {"type": "string", "enum": _MODELS, "default": "mistv3"},
        "lang": {"type": "string", "enum": _LANGS, "default": "en"},
        "samplingRate": {"type": "integer", "minimum": 8000, "maximum": 48000, "default": 24000},
        "timeScaleFactor": {"type": "number", "default": 1.0,
                            "description": "above 1.0 slower; clamped to 0.4-2.5 without error"},
        "speedAlpha": {"type": "number", "description": "mistv2: below 1.0 faster; mistv3/coda: above 1.0 faster"},
        "audioFormat": {"type": "string", "description": "JSON variant (mist, mistv2): mp3, wav, ogg or mulaw"},
        "noTextNormalization": {"type": "boolean", "default": False},
        "reduceLatency": {"type": "boolean", "default": False, "description": "older name of noTextNormalization"},
        "pauseBetweenBrackets": {"type": "boolean", "default": False, "description": "<200> is a 200 ms pause"},
        "phonemizeBetweenBrackets": {"type": "boolean", "default": False, "description": "{...} is IPA, spoken as written"},
        "inlineSpeedAlpha": {"type": "string", "description": "e.g. \"0.5, 3\": speeds for the [bracketed] words, in order"},
    },
}



def job_request_schema() -> dict[str, Any]:
    """``/v1/jobs``' body: the vendor's synthesis fields (above, hand-parsed there too) and the
    job's own options as ``facade.job_request.JobRequest`` declares them (generated)."""
    options = job_request.schema()
    return {
        "type": "object",
        "required": ["speaker"],
        "description": options.get("description", ""),
        "properties": {
            **{k: v for k, v in SYNTHESIS_REQUEST["properties"].items() if k != "text"},
            "text": {"type": "string", "minLength": 1, "maxLength": 2_000_000},
            **options["properties"],
        },
    }


TEXT_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["text"],
    "properties": {"text": {"type": "string"}, "lang": {"type": "string", "enum": _LANGS, "default": "en"},
                   "speaker": {"type": "string"}, "modelId": {"type": "string", "enum": _MODELS}},
}

_PLAIN_ERROR = {"text/plain": {"schema": {"type": "string"}}}
_JSON_ERROR = {"application/json": {"schema": {"type": "object", "properties": {"error": {"type": "string"}}}}}


def _errors(*statuses: int, json_errors: bool = False) -> dict[str, Any]:
    reasons = {400: "bad request (the message says which field and why)", 401: "authentication failed",
               403: "access forbidden", 404: "not found", 406: "Accept names a type this model cannot produce",
               409: "Idempotency-Key conflict",
               500: "internal error", 502: "text normalization engine error"}
    return {str(s): {"description": reasons[s], "content": _JSON_ERROR if json_errors else _PLAIN_ERROR}
            for s in statuses}


def _audio_content() -> dict[str, Any]:
    types = [*supported_accept_list().split(", "), *DEPRECATED_ALIASES, "application/json", "text/event-stream"]
    return {t: {"schema": {"type": "string", "format": "binary"}} for t in types}


WEBSOCKETS: dict[str, Any] = {
    "/ws3": {"description": "JSON WebSocket, every model. Query: the synthesis fields (booleans as strings) plus "
                            "audioFormat (mp3, mulaw, pcm) and segment (bySentence, immediate, never). Client sends "
                            "{text, contextId?}, {operation: flush|clear|eos}; server sends chunk, timestamps, done, "
                            "error events. Failures after the upgrade close with 1011 '<status>: <message>'."},
    "/ws2": {"description": "As /ws3, for mistv2 (the default modelId there)."},
    "/ws": {"description": "Raw: text frames in, binary audio out; <FLUSH>, <CLEAR>, <EOS>."},
}

_BODIES: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]] = {
    ("/v1/service-tts", "post"): (SYNTHESIS_REQUEST, {"200": {"description": "audio, streamed",
                                                             "content": _audio_content()},
                                                     **_errors(400, 401, 403, 406, 500)}),
    ("/v1/jobs", "post"): (job_request_schema(), {"202": {"description": "queued: {id, status}"},
                                         **_errors(400, 401, 403, 409)}),
    ("/oov", "post"): (TEXT_REQUEST, _errors(400, 401)),
    ("/textnorm", "post"): (TEXT_REQUEST, _errors(400, 401, 502, json_errors=True)),
    ("/phonemize", "post"): (TEXT_REQUEST, _errors(400, 401, json_errors=True)),
}


def install(app: FastAPI) -> None:
    """Make ``app.openapi()`` return the generated document with the additions above."""
    generate: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        spec = generate()
        for (path, method), (schema, responses) in _BODIES.items():
            operation = spec["paths"].get(path, {}).get(method)
            if operation is None:
                continue
            content: dict[str, Any] = {"application/json": {"schema": schema}}
            if path == "/v1/jobs":  # or the book as a file, every other field a form field (facade.job_form)
                form = {**schema, "required": []}
                form["properties"] = {**schema["properties"], "file": {"type": "string", "format": "binary"},
                                      "cover": {"type": "string", "format": "binary"}}
                content["multipart/form-data"] = {"schema": form}
            operation["requestBody"] = {"required": True, "content": content}
            operation["responses"] = {**operation.get("responses", {}), **responses}
            operation["responses"].pop("422", None)  # FastAPI's validation answer is never sent here
        spec["x-websockets"] = WEBSOCKETS
        app.openapi_schema = spec
        return spec

    app.openapi = openapi  # type: ignore[method-assign]
