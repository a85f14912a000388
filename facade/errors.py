"""The one mapping from lector's errors to the seed's HTTP answers.

Bodies are the seed's plain-text messages. JSON ``{"error": ...}`` is used only where the seed
says so: an unhandled 500 from the streaming synthesis endpoint, and failures of ``/phonemize``
and ``/textnorm``. Anything unmapped is a 500 ``internal error`` logged with its traceback.
"""

from __future__ import annotations

import logging

from fastapi import Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from speech import errors as speech_errors
from store import errors as store_errors

log = logging.getLogger("lector.facade")


class ApiError(Exception):
    """An answer the facade decided on: status plus the seed's exact message."""

    def __init__(self, status: int, message: str, *, json_body: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.json_body = json_body


# Seed messages, verbatim. One constant each so tests and handlers share the spelling.
BODY_REQUIRED = "request body is required"
NOT_AN_OBJECT = "payload must be an object"
TEXT_REQUIRED = "text is required"
TEXT_NOT_STRING = "text must be a string"
TEXT_EMPTY = "text must not be empty"
TEXT_TOO_LONG = "text is too long"
SPEAKER_REQUIRED = "speaker is required"
LANG_NOT_STRING = "lang must be a string"
AUDIO_FORMAT_NOT_STRING = "audioFormat must be a string"
MISSING_AUTH = "Missing Authorization header"
MISSING_HEADERS = "missing headers"
EMPTY_KEY = "empty apikey"
INVALID_KEY = "invalid api key"
INVALID_SUBSCRIPTION = "invalid subscription"
FORBIDDEN = "access forbidden"
WS_LIMIT = "Currently at websocket limit"
INTERNAL = "internal error"
DATABASE = "Database error"
TEXTNORM_ENGINE = "text normalization engine error"

# Domain error -> (status, message or None to use str(exc)).
_TABLE: dict[type[Exception], tuple[int, str | None]] = {
    speech_errors.LanguageNotSupported: (400, None),
    speech_errors.VoiceNotFound: (400, None),
    speech_errors.ModelNotFound: (400, None),
    speech_errors.PhonemesNotSupported: (400, None),
    speech_errors.UnsupportedFormat: (400, None),
    store_errors.InvalidApiKey: (401, INVALID_KEY),
    store_errors.InvalidSubscription: (401, INVALID_SUBSCRIPTION),
    store_errors.DatabaseUnavailable: (500, DATABASE),
    store_errors.JobNotFound: (404, "job not found"),
    store_errors.IdempotencyConflict: (
        409,
        "Idempotency-Key was already used with a different request body",
    ),
}


def lookup(exc: Exception) -> tuple[int, str] | None:
    """Status and message for a domain error, most specific class first."""
    for cls in type(exc).__mro__:
        if cls in _TABLE:
            status, message = _TABLE[cls]
            return status, message if message is not None else str(exc)
    return None


def client_error(exc: Exception) -> ApiError | None:
    """A domain error that is the client's (a 4xx: a voice the deployment does not serve), as
    the answer to give instead of the streaming endpoint's JSON 500; ``None`` for the rest."""
    mapped = lookup(exc)
    if mapped is not None and 400 <= mapped[0] < 500:
        return ApiError(*mapped)
    return None


def plain(status: int, message: str) -> Response:
    return PlainTextResponse(message, status_code=status, media_type="text/plain; charset=utf-8")


def to_response(exc: Exception) -> Response:
    if isinstance(exc, ApiError):
        if exc.json_body:
            return JSONResponse({"error": exc.message}, status_code=exc.status)
        return plain(exc.status, exc.message)
    mapped = lookup(exc)
    if mapped is not None:
        return plain(*mapped)
    log.exception("unhandled error", exc_info=exc)
    return plain(500, INTERNAL)


async def handle(request: Request, exc: Exception) -> Response:
    """Registered for ``Exception`` on the app: every error funnels through ``to_response``."""
    return to_response(exc)
