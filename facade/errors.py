"""The one mapping from lector's errors to the seed's HTTP answers.

Bodies are the seed's plain-text messages. JSON ``{"error": ...}`` is used only where the seed
says so: an unhandled 500 from the streaming synthesis endpoint, and every failure of
``/phonemize`` and ``/textnorm`` (``JSON_PATHS``: 404, 405 and 413 included). Anything unmapped is
a 500 ``internal error`` logged with its traceback; a client that hung up mid-upload is one quiet
log line. Messages that echo the caller's input cut it short (``cut``).
"""

from __future__ import annotations

import logging

from fastapi import Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from starlette.requests import ClientDisconnect

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
BODY_TIMEOUT = "request body was not received in time"
CLIENT_GONE = "client disconnected"

#: Endpoints whose every failure is JSON ``{"error": ...}`` (the seed).
JSON_PATHS = frozenset({"/textnorm", "/phonemize"})
#: How much of the caller's own input an error message repeats.
ECHO_CHARS = 64


def cut(value: object, limit: int = ECHO_CHARS) -> str:
    """``value`` as text, cut to ``limit`` characters: error messages name what was wrong
    without echoing a 10 KB speaker name back (or into the logs)."""
    text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def body_too_large(max_bytes: int) -> ApiError:
    return ApiError(413, f"request body is too large (at most {max_bytes} bytes)")

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


def to_response(exc: Exception, *, path: str = "") -> Response:
    """The answer to ``exc``; on a ``JSON_PATHS`` endpoint always a JSON body."""
    as_json = path in JSON_PATHS
    if isinstance(exc, ApiError):
        status, message, as_json = exc.status, exc.message, as_json or exc.json_body
    elif isinstance(exc, ClientDisconnect):
        # Nobody reads this answer; one line, no traceback (a hang-up is not our failure).
        log.info("%s: %s", CLIENT_GONE, path or "request")
        status, message = 400, CLIENT_GONE
    elif (mapped := lookup(exc)) is not None:
        status, message = mapped
    else:
        log.exception("unhandled error", exc_info=exc)
        status, message = 500, INTERNAL
    if as_json:
        return JSONResponse({"error": message}, status_code=status)
    return plain(status, message)


async def handle(request: Request, exc: Exception) -> Response:
    """Registered for ``Exception`` on the app: every error funnels through ``to_response``."""
    return to_response(exc, path=request.url.path)
