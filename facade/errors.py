"""The one translation from lector's errors to HTTP answers: status, message and body shape.

Every domain error (``speech``, ``store``, ``books``, ``scheduler``) is mapped once, in ``_TABLE``; routes
raise and never build an error answer themselves (``tests/unit/facade/test_error_table.py``
checks both). The body's shape is chosen per router, as the vendor API contract requires:

- ``Style.PLAIN``: the vendor API contract's plain-text message, everywhere by default;
- ``Style.JSON``: ``{"error": ...}`` for every failure of ``/phonemize`` and ``/textnorm``
  (``JSON_PATHS``: 404, 405 and 413 included), and for an unhandled 500 of the streaming
  synthesis endpoint (``unhandled_as(..., json_body=True)``);
- ``Style.OPENAI``: OpenAI's ``{"error": {"message", "type", "param", "code"}}`` on
  ``/v1/audio/speech`` alone, whose router uses ``OpenAIRoute``.

Anything unmapped is a 500 ``internal error`` logged with its traceback; a client that hung up
mid-upload is one quiet log line. Messages that echo the caller's input cut it short (``cut``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from enum import StrEnum
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from books import errors as book_errors
from facade import invocations_format as wire
from scheduler import errors as scheduler_errors
from speech import errors as speech_errors
from store import errors as store_errors

log = logging.getLogger("lector.facade")


class ApiError(Exception):
    """An answer the facade decided on: status plus the vendor API contract's exact message. ``json_body``
    asks for ``{"error": ...}`` on a router whose errors are otherwise plain text."""

    def __init__(
        self, status: int, message: str, *, json_body: bool = False, fields: Mapping[str, object] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.json_body = json_body
        self.fields = dict(fields or {})  # more keys of a JSON body (the model service's ``served``)


class OpenAIError(ApiError):
    """An answer of the OpenAI route naming the request field at fault (``param``) and OpenAI's
    ``code`` where it has one (``string_above_max_length``)."""

    def __init__(self, status: int, message: str, *, param: str | None = None, code: str | None = None) -> None:
        super().__init__(status, message)
        self.param = param
        self.code = code


class Style(StrEnum):
    """The body of an error answer: what the router's clients parse."""

    PLAIN = "plain"
    JSON = "json"
    OPENAI = "openai"


# The vendor API contract's messages, verbatim. One constant each so tests and handlers share the spelling.
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
JOB_NOT_FOUND = "job not found"
SEGMENT_NOT_FOUND = "segment not found"
DATABASE = "Database error"
TEXTNORM_ENGINE = "text normalization engine error"
BODY_TIMEOUT = "request body was not received in time"
# The model service's own answers (its client, facade.remote_engine, reads them).
MODEL_NOT_READY = "model not ready"
MODEL_BODY_NOT_JSON = "body must be JSON"
PHONEMIZE_BODY = 'body must be {"text": "...", "voice": "..." (optional)}'
CLIENT_GONE = "client disconnected"

#: Endpoints whose every failure is JSON ``{"error": ...}`` (the vendor API contract).
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


# Domain error -> (status, message, or None for the error's own message). Most specific class first.
_TABLE: dict[type[Exception], tuple[int, str | None]] = {
    speech_errors.LanguageNotSupported: (400, None),
    speech_errors.VoiceNotFound: (400, None),
    speech_errors.ModelNotFound: (400, None),
    speech_errors.TextError: (400, None),  # markup (inlineSpeedAlpha), {phonemes} for a text-only voice
    speech_errors.MalformedXml: (400, None),  # SSML or PLS that is not XML: names line and column
    speech_errors.UnsafeXml: (400, None),  # a DTD, entities, or a document past the parser's limits
    speech_errors.SsmlError: (400, None),  # names the element or attribute and where it is
    speech_errors.LexiconError: (400, None),  # names the line and what is wrong
    speech_errors.UnsupportedFormat: (400, None),
    wire.InvalidInvocation: (400, None),  # a malformed /invocations body (the model service)
    store_errors.InvalidApiKey: (401, INVALID_KEY),
    store_errors.InvalidSubscription: (401, INVALID_SUBSCRIPTION),
    store_errors.DatabaseUnavailable: (500, DATABASE),
    store_errors.TransactionConflict: (500, DATABASE),  # after the writes' own retries (store.db.session.retrying_conflicts)
    store_errors.JobNotFound: (404, JOB_NOT_FOUND),
    # The only stored objects the API serves are a job's artefacts: one deleted under us
    # (retention, an operator) is answered as its job would be.
    store_errors.ObjectNotFound: (404, JOB_NOT_FOUND),
    store_errors.IdempotencyConflict: (409, "Idempotency-Key was already used with a different request body"),
    store_errors.InvalidArgument: (400, None),
    store_errors.AccountNotFound: (404, "account not found"),
    store_errors.AccountExists: (409, "account already exists"),
    store_errors.KeyNotFound: (404, "key not found"),
    scheduler_errors.InvalidWebhookUrl: (400, None),
    book_errors.SourceError: (400, None),
    book_errors.InvalidChapters: (400, None),
    book_errors.InvalidCast: (400, None),
    scheduler_errors.LexiconRefused: (400, None),
    scheduler_errors.TooManyJobs: (429, None),
    scheduler_errors.SegmentNotFound: (404, SEGMENT_NOT_FOUND),  # a live playlist's, unlisted or no such name
    store_errors.LexiconNotFound: (404, None),
}
#: The roots registered with the app: Starlette re-raises (and uvicorn logs as unhandled)
#: whatever only the catch-all ``Exception`` handler answered.
DOMAIN_ROOTS: tuple[type[Exception], ...] = (
    speech_errors.SpeechError, store_errors.StoreError, book_errors.BookError, scheduler_errors.SchedulerError,
)
#: OpenAI's ``code`` for a status, where its API sets one.
OPENAI_CODES = {401: "invalid_api_key", 403: "model_not_allowed", 429: "rate_limit_exceeded"}


def lookup(exc: BaseException) -> tuple[int, str] | None:
    """Status and message for a domain error, most specific class first; ``None`` if unmapped."""
    for cls in type(exc).__mro__:
        if cls in _TABLE:
            status, message = _TABLE[cls]
            return status, message if message is not None else str(exc)
    return None


def status_and_message(exc: BaseException) -> tuple[int, str]:
    """The answer to ``exc``, whatever the transport: an ``ApiError`` as decided, a hang-up as
    ``400 client disconnected``, a domain error by the table, anything else ``500 internal error``.
    The WebSockets close with it (``<status>: <message>``); ``to_response`` gives it a body."""
    if isinstance(exc, ApiError):
        return exc.status, exc.message
    if isinstance(exc, ClientDisconnect):
        return 400, CLIENT_GONE
    return lookup(exc) or (500, INTERNAL)


def openai_error_type(status: int) -> str:
    """OpenAI's ``type`` for a status: what its clients branch on besides the status itself."""
    if status == 401:
        return "authentication_error"
    if status == 403:
        return "permission_error"
    if status == 429:
        return "rate_limit_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


def render(
    status: int, message: str, style: Style, *, param: str | None = None, code: str | None = None,
    fields: Mapping[str, object] | None = None,
) -> Response:
    """The error answer in the router's body shape (``fields``: more keys of a JSON body)."""
    if style is Style.OPENAI:
        body = {"error": {"message": message, "type": openai_error_type(status), "param": param, "code": code}}
        return JSONResponse(body, status_code=status)
    if style is Style.JSON:
        return JSONResponse({"error": message, **(fields or {})}, status_code=status)
    return PlainTextResponse(message, status_code=status, media_type="text/plain; charset=utf-8")


def to_response(exc: Exception, *, path: str = "", style: Style | None = None) -> Response:
    """The answer to ``exc``. Without a ``style``, by path: JSON on ``JSON_PATHS``, else plain."""
    if isinstance(exc, ClientDisconnect):
        # Nobody reads this answer; one line, no traceback (a hang-up is not our failure).
        log.info("%s: %s", CLIENT_GONE, path or "request")
    elif not isinstance(exc, ApiError) and lookup(exc) is None:
        log.exception("unhandled error", exc_info=exc)
    status, message = status_and_message(exc)
    if style is None:
        as_json = path in JSON_PATHS or (isinstance(exc, ApiError) and exc.json_body)
        style = Style.JSON if as_json else Style.PLAIN
    if style is Style.OPENAI:
        if isinstance(exc, OpenAIError):
            return render(status, message, style, param=exc.param, code=exc.code)
        return render(status, message, style, code=OPENAI_CODES.get(status))
    return render(status, message, style, fields=exc.fields if isinstance(exc, ApiError) else None)


def install(app: FastAPI, *, style: Style | None = None) -> None:
    """Register the table's handlers on ``app``: FastAPI's JSON error handlers are replaced.
    ``style``: every answer of the app in that shape (the model service: JSON); ``None``: by
    path, as ``to_response`` chooses."""

    async def handle(request: Request, exc: Exception) -> Response:
        """Registered for ``Exception`` on the app: every error funnels through ``to_response``."""
        return to_response(exc, path=request.url.path, style=style)

    async def http_error(request: Request, exc: Exception) -> Response:
        """Starlette's own 404 and 405 (and any ``HTTPException``) in the vendor API contract's words."""
        assert isinstance(exc, StarletteHTTPException)
        message = {404: "not found", 405: "method not allowed"}.get(exc.status_code, str(exc.detail))
        return to_response(ApiError(exc.status_code, message), path=request.url.path, style=style)

    async def validation_error(request: Request, exc: Exception) -> Response:
        """Query and body validation errors: ``<field>: <what is wrong>`` (``validation_message``)."""
        assert isinstance(exc, RequestValidationError)
        return to_response(ApiError(400, validation_message(exc)), path=request.url.path, style=style)

    handled: tuple[type[Exception], ...] = (ApiError, *DOMAIN_ROOTS, ClientDisconnect, Exception)
    for error_class in handled:
        app.add_exception_handler(error_class, handle)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)


def validation_message(exc: RequestValidationError) -> str:
    """The first of pydantic's errors as ``<param>: <pydantic's message>``, never its raw dump."""
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(p) for p in first.get("loc", ())[1:]) or "request"
    return f"{where}: {first.get('msg', 'invalid')}"


@contextmanager
def unhandled_as(
    status: int, message: str, *, what: str, json_body: bool = False, logger: logging.Logger = log
) -> Iterator[None]:
    """Inside: the facade's own answers and the client's errors (a mapped 4xx: a voice this
    deployment does not serve) keep their answer; anything else is logged as ``what`` and
    answered ``status message``. The vendor API contract's JSON 500 of the streaming synthesis endpoint and
    ``/textnorm``'s 502 for a failing engine are this rule."""
    try:
        yield
    except ApiError:
        raise
    except Exception as exc:  # noqa: BLE001 - this is the rule for every failure inside
        mapped = lookup(exc)
        if mapped is not None and 400 <= mapped[0] < 500:
            raise ApiError(*mapped) from exc
        logger.exception(what, exc_info=exc)
        raise ApiError(status, message, json_body=json_body) from exc


class OpenAIRoute(APIRoute):
    """A route whose failures are answered in OpenAI's error shape: the route's own errors only
    (a 405, or a declared body over the cap, is answered before it, as on every route)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def answered(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as exc:  # noqa: BLE001 - every failure, in OpenAI's shape
                return to_response(exc, path=request.url.path, style=Style.OPENAI)

        return answered
