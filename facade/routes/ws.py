"""WebSockets: ``/ws3`` and ``/ws2`` (JSON messages) and ``/ws`` (raw text in, audio out).

Parameters come in the query string (booleans as ``true``/``false``). Authentication and
parameter errors are answered at the upgrade as an HTTP status with the vendor API contract's plain-text body;
no socket is established then. After the socket is open, a failure closes it with 1011 and the
reason ``<status>: <message>``; a bad client message gets an ``error`` event and the socket stays.

A connection holds a text buffer and one synthesis at a time. Synthesis runs in a background
task so the socket keeps reading: ``clear`` (barge-in) drops the buffer and stops the run in
flight between two sentences.

Every run sends its ``chunk`` events and one ``timestamps`` event. ``done`` answers ``flush`` and
``eos`` only: one per operation, after the audio of all text sent before it, also when the
sentences were already synthesized as they arrived (``bySentence``, ``immediate``). Every
``flush`` gets its ``done``, also with nothing buffered (right after ``clear``); an ``eos`` with
no text since the previous ``done`` gets none. The three sockets share one loop (``_loop``):
only how a message is read differs, so ``clear`` and ``<CLEAR>`` cannot drift apart. The vendor's
clients end a turn at the first ``done`` (LiveKit's plugin sends every sentence, then one
``flush``, and stops reading at ``done``; Pipecat closes the turn's audio context), so a ``done``
after each sentence would cut their turns after the first sentence.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from facade import browser_auth
from facade import errors as e
from facade.deps import Principal, Services
from facade.metered import MeteredSynthesis
from facade.metrics import observe_first_byte
from facade.ratelimit import allow_connection
from facade.request_resolution import ResolvedRequest, default_rate, resolve
from facade.validation import (
    MAX_TEXT_CHARS,
    SSML_MARKUP_FACTOR,
    SynthesisRequest,
    parse_request,
    parse_text_type,
)
from facade.word_timestamps import word_timestamps
from speech.audio import JSON_WEBSOCKET_FORMATS, RAW_WEBSOCKET_FORMATS, AudioFormat, from_audio_format_param
from speech.text.ssml import looks_like_ssml

log = logging.getLogger("lector.ws")
router = APIRouter()

SENTENCE_END = re.compile(r"[.!?。！？؟।]+[\"')\]]*\s")
SENTENCE_FINAL = ".!?。！？؟।"
RAW_FLUSH_AT = re.compile(r"[.,!?。！？؟।]")


@dataclass(slots=True)
class SocketState:
    """What one socket carries between messages: its settings, buffer, queue and billing state."""

    services: Services
    principal: Principal
    base: SynthesisRequest
    fmt: AudioFormat
    rate: int
    segment: str
    json_events: bool
    endpoint: str  # "ws3", "ws2" or "ws": what the account's endpoint list is checked against
    buffer: list[tuple[str, str | None]] = field(default_factory=list)  # (text, contextId)
    context_id: str | None = None
    # (text, contextId, answers a flush/eos with "done", where the text starts in the socket's
    # text); None ends the worker
    queue: asyncio.Queue[tuple[str, str | None, bool, int] | None] = field(default_factory=asyncio.Queue)
    # Characters the socket's text messages carried so far, and where the buffer starts among
    # them: word timings count their offsets in the socket's whole text (docs/api.md), so a run
    # cut out of it adds where it starts.
    received: int = 0
    buffer_start: int = 0
    generation: int = 0  # bumped by clear: runs of an older generation stop
    unanswered: bool = False  # text was queued since the last "done" (or clear)
    failed: bool = False  # the worker closed the socket with 1011; the reader just stops
    # A run was billed: the socket's text is one text cut into runs at whitespace, so every later
    # run carries the break before it (speech.billing), and a text bills the same sent in one
    # run or sentence by sentence.
    billed: bool = False


def _query(websocket: WebSocket) -> dict[str, Any]:
    params: dict[str, Any] = dict(websocket.query_params)
    if "immediate" in params and "segment" not in params:
        params["segment"] = "immediate" if params.pop("immediate").lower() == "true" else "bySentence"
    return params


async def _open(websocket: WebSocket, *, json_events: bool, endpoint: str, model_default: str | None) -> SocketState | None:
    services: Services = websocket.app.state.services
    browser_key = browser_auth.key_from_protocols(browser_auth.offered_protocols(websocket.headers))
    try:
        from facade.deps import bearer_key

        if browser_key is not None:  # the console: the key in a subprotocol (facade/browser_auth.py)
            if not browser_key:
                raise e.ApiError(401, e.EMPTY_KEY)
            key = browser_key
        else:
            key = bearer_key(websocket.headers, missing_message=e.MISSING_HEADERS)
        if services.access.authenticator is None:
            raise e.ApiError(401, e.INVALID_KEY)
        principal = await services.offload(services.access.authenticator, key)
        params = _query(websocket)
        if model_default and "modelId" not in params:
            params["modelId"] = model_default
        base = replace(parse_request({**params, "text": "-"}), ssml=False)  # SSML is told per message
        resolved = await services.offload(resolve, services, base, principal, endpoint=endpoint)
        allowed = JSON_WEBSOCKET_FORMATS if json_events else RAW_WEBSOCKET_FORMATS
        fmt = from_audio_format_param(params.get("audioFormat") or "pcm", allowed=allowed)
        segment = params.get("segment", "bySentence")
        if segment not in ("bySentence", "immediate", "never"):
            raise e.ApiError(400, "segment must be one of: bySentence, immediate, never")
        if not await allow_connection(services, principal):
            raise e.ApiError(429, e.WS_LIMIT)
    except Exception as exc:  # noqa: BLE001 - every refusal is an HTTP answer at the upgrade
        response = e.to_response(exc)
        if browser_key is not None:  # a browser cannot read a refused upgrade's body
            await websocket.accept(subprotocol=browser_auth.MARKER)
            reason = f"{response.status_code}: {bytes(response.body).decode('utf-8', 'replace')}"
            await websocket.close(code=browser_auth.close_code(response.status_code), reason=reason[:120])
            return None
        await websocket.send_denial_response(response)
        return None
    await websocket.accept(subprotocol=browser_auth.MARKER if browser_key is not None else None)
    rate = base.sampling_rate or default_rate(resolved.model_id, fmt.value)
    return SocketState(services, principal, base, fmt, rate, segment, json_events, endpoint)


async def _synthesize(
    websocket: WebSocket, state: SocketState, text: str, context_id: str | None, done: bool, at: int = 0
) -> None:
    services = state.services
    started: float | None = time.perf_counter()
    # A JSON socket's run that is a <speak> document came in as one message (``_read_json``).
    req = replace(state.base, text=text, ssml=state.json_events and looks_like_ssml(text))
    try:
        resolved: ResolvedRequest = await services.offload(resolve, services, req, state.principal, endpoint=state.endpoint)
    except e.ApiError as exc:
        if exc.message != e.TEXT_EMPTY:
            raise
        # Only characters that normalise away ("* * *"): nothing to say, and the socket stays.
        if state.json_events:
            await websocket.send_text(_error(state, e.TEXT_EMPTY))
            if done:
                await websocket.send_text(json.dumps({"type": "done", "contextId": context_id}))
        return
    generation = state.generation
    metered = MeteredSynthesis(
        services, state.principal, req, resolved, rate=state.rate, transport="ws", continues=state.billed
    )
    metered.open(state.fmt)
    try:
        while state.generation == generation:
            data = await metered.next()
            if data is None:
                break
            if started is not None:
                observe_first_byte("ws", state.fmt.value, since=started)
                started = None
            if state.json_events:
                await websocket.send_text(json.dumps({"type": "chunk", "data": base64.b64encode(data).decode(), "contextId": context_id}))
            else:
                await websocket.send_bytes(data)
        # Billed before "done": a client that saw the run complete is billed even if we die now.
        await metered.bill()
        if state.json_events and state.generation == generation:
            words = metered.stats.words
            await websocket.send_text(json.dumps({
                "type": "timestamps",
                "word_timestamps": word_timestamps(words, at),
                "contextId": context_id,
            }))
            if done:
                await websocket.send_text(json.dumps({"type": "done", "contextId": context_id}))
    finally:
        await metered.finish()  # a hang-up cancels this task; what was made is still billed
        state.billed = state.billed or metered.stats.begun > 0


async def _worker(websocket: WebSocket, state: SocketState) -> None:
    """Synthesizes queued runs in order. A failure closes the socket with 1011 at once: a client
    waiting for ``done`` (LiveKit, Pipecat) must learn of it now, not at its next message."""
    try:
        while (item := await state.queue.get()) is not None:
            text, context_id, done, at = item
            if text.strip():
                await _synthesize(websocket, state, text, context_id, done, at)
            elif done and state.json_events:  # a flush with nothing left to say: everything before it is out
                await websocket.send_text(json.dumps({"type": "done", "contextId": context_id}))
    except (WebSocketDisconnect, asyncio.CancelledError):
        raise
    except Exception as exc:  # noqa: BLE001 - every failure of a run is a 1011 close
        state.failed = True
        await _close_failed(websocket, exc)


async def _close_failed(websocket: WebSocket, exc: Exception) -> None:
    """Close with 1011 and ``<status>: <message>``, the HTTP answer the same failure would get."""
    status, message = e.status_and_message(exc)
    if status >= 500:
        log.exception("websocket failed", exc_info=exc)
    with contextlib.suppress(Exception):
        await websocket.close(1011, f"{status}: {message}"[:120])


async def _enqueue(
    state: SocketState, runs: list[tuple[str, str | None, int]], *, done: bool = False, always: bool = False
) -> None:
    """Queue runs. With ``done`` (flush, eos), the last run, or an empty marker after the runs
    already queued, answers ``done``: a flush (``always``) every time, even with nothing
    buffered (right after ``clear``), so a client that waits for ``done`` after every flush never
    hangs; an eos only when text was queued since the last ``done``."""
    state.unanswered = state.unanswered or bool(runs)
    answer = done and (always or state.unanswered)
    if answer and not runs:
        runs = [("", state.context_id, state.received)]
    for i, (text, context_id, at) in enumerate(runs):
        await state.queue.put((text, context_id, answer and i == len(runs) - 1, at))
    if answer:
        state.unanswered = False


def _clear(state: SocketState) -> None:
    """Barge-in, the same on every socket: the buffer is dropped, runs already queued are dropped,
    and the run in flight stops between two sentences (its generation is over)."""
    state.buffer.clear()
    state.generation += 1
    state.unanswered = False
    while not state.queue.empty():
        state.queue.get_nowait()


def _take(state: SocketState, *, whole: bool) -> list[tuple[str, str | None, int]]:
    """Cut the buffer into runs to synthesize: everything (flush) or up to the last sentence end;
    each run with where it starts in the socket's text."""
    text = "".join(t for t, _ in state.buffer)
    context_id = state.buffer[-1][1] if state.buffer else state.context_id
    at = state.buffer_start
    if whole:
        state.buffer.clear()
        return [(text, context_id, at)] if text.strip() else []
    cut = 0
    for match in SENTENCE_END.finditer(text):
        cut = match.end()
    if text.rstrip() and text.rstrip()[-1] in SENTENCE_FINAL:
        cut = len(text)  # a message that ends a sentence without trailing space
    if cut == 0:
        return []
    state.buffer[:] = [(text[cut:], context_id)] if text[cut:] else []
    state.buffer_start = at + cut
    return [(text[:cut], context_id, at)]


def _error(state: SocketState, message: str) -> str:
    """An ``error`` event; it carries the current contextId, since clients (Pipecat) route by it."""
    return json.dumps({"type": "error", "message": message, "contextId": state.context_id})


@dataclass(frozen=True, slots=True)
class _Command:
    """One client message, whichever socket it came in on: ``text``, ``flush``, ``clear`` or ``eos``."""

    kind: str
    text: str = ""


async def _read_json(websocket: WebSocket, state: SocketState) -> _Command | None:
    """The next ``/ws3``/``/ws2`` message; ``None`` when it was bad (an ``error`` event went out)."""
    raw = await websocket.receive_text()
    try:
        message = json.loads(raw)
        if not isinstance(message, dict):
            raise ValueError
    except ValueError:
        await websocket.send_text(_error(state, e.NOT_AN_OBJECT))
        return None
    if "contextId" in message:
        state.context_id = message.get("contextId")
    operation = message.get("operation")
    if operation is None:
        text = message.get("text")
        if not isinstance(text, str):
            await websocket.send_text(_error(state, e.TEXT_NOT_STRING if "text" in message else e.TEXT_REQUIRED))
            return None
        ssml = parse_text_type(message.get("textType"), text)
        if len(text) > MAX_TEXT_CHARS * (SSML_MARKUP_FACTOR if ssml else 1):
            raise e.ApiError(400, e.TEXT_TOO_LONG)  # the vendor API contract's 1011 "400: text is too long"
        return _Command("ssml" if ssml else "text", text)
    if operation in ("flush", "clear", "eos"):
        return _Command(operation)
    await websocket.send_text(_error(state, f"unknown operation {e.cut(operation)}"))
    return None


_RAW_MARKERS = {"<CLEAR>": "clear", "<FLUSH>": "flush", "<EOS>": "eos"}


async def _read_raw(websocket: WebSocket, state: SocketState) -> _Command | None:
    """The next ``/ws`` message: a marker, or text."""
    text = await websocket.receive_text()
    kind = _RAW_MARKERS.get(text.strip())
    return _Command(kind) if kind else _Command("text", text)


def _runs_for_text(state: SocketState, text: str) -> list[tuple[str, str | None, int]]:
    """What new text sets off: by the socket's segmentation (``/ws`` speaks at punctuation)."""
    if not state.buffer:
        state.buffer_start = state.received
    state.buffer.append((text, state.context_id))
    state.received += len(text)
    if not state.json_events:
        return _take(state, whole=True) if RAW_FLUSH_AT.search(text) else []
    if state.segment == "immediate":
        return _take(state, whole=True)
    if state.segment == "bySentence":
        return _take(state, whole=False)
    return []


async def _loop(websocket: WebSocket, state: SocketState) -> None:
    """One mechanism for every socket: read a command, act on the buffer and the run queue."""
    read = _read_json if state.json_events else _read_raw
    worker = asyncio.create_task(_worker(websocket, state))
    try:
        while True:
            command = await read(websocket, state)
            if command is None:
                continue
            if command.kind == "text":
                await _enqueue(state, _runs_for_text(state, command.text))
            elif command.kind == "ssml":  # a whole document is one run, after the text before it
                runs = [*_take(state, whole=True), (command.text, state.context_id, state.received)]
                state.received += len(command.text)
                await _enqueue(state, runs)
            elif command.kind == "clear":
                _clear(state)
            elif command.kind == "flush":
                buffered = "".join(t for t, _ in state.buffer)
                if buffered and not buffered.strip() and state.json_events:
                    await websocket.send_text(_error(state, e.TEXT_EMPTY))
                await _enqueue(state, _take(state, whole=True), done=True, always=True)
            else:  # eos
                await _enqueue(state, _take(state, whole=True), done=True)
                await state.queue.put(None)
                await worker
                await websocket.close(1000)
                return
    finally:
        if not worker.done():
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await worker


async def _serve(websocket: WebSocket, *, json_events: bool, endpoint: str, model_default: str | None = None) -> None:
    state = await _open(websocket, json_events=json_events, endpoint=endpoint, model_default=model_default)
    if state is None:
        return
    try:
        await _loop(websocket, state)
    except WebSocketDisconnect:
        return
    except Exception as exc:  # noqa: BLE001 - after the upgrade, failures close with 1011
        if not state.failed:  # else the worker already closed it, and reading after that fails
            await _close_failed(websocket, exc)


@router.websocket("/ws3")
async def ws3(websocket: WebSocket) -> None:
    await _serve(websocket, json_events=True, endpoint="ws3")


@router.websocket("/ws2")
async def ws2(websocket: WebSocket) -> None:
    await _serve(websocket, json_events=True, endpoint="ws2", model_default="mistv2")


@router.websocket("/ws")
async def ws_raw(websocket: WebSocket) -> None:
    await _serve(websocket, json_events=False, endpoint="ws")
