"""WebSockets: ``/ws3`` and ``/ws2`` (JSON messages) and ``/ws`` (raw text in, audio out).

Parameters come in the query string (booleans as ``true``/``false``). Authentication and
parameter errors are answered at the upgrade as an HTTP status with the seed's plain-text body;
no socket is established then. After the socket is open, a failure closes it with 1011 and the
reason ``<status>: <message>``; a bad client message gets an ``error`` event and the socket stays.

A connection holds a text buffer and one synthesis at a time. Synthesis runs in a background
task so the socket keeps reading: ``clear`` (barge-in) drops the buffer and stops the run in
flight between two sentences.

Every run sends its ``chunk`` events and one ``timestamps`` event. ``done`` answers ``flush`` and
``eos`` only: one per operation, after the audio of all text sent before it, also when the
sentences were already synthesized as they arrived (``bySentence``, ``immediate``); an operation
with no text since the previous ``done`` (or ``clear``) gets none. The vendor's
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
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from starlette.concurrency import run_in_threadpool

from facade import errors as e
from facade.deps import Principal, Services
from facade.metrics import observe_first_byte
from facade.ratelimit import allow_connection
from facade.synthesis import Plan, default_rate, resolve
from facade.usage import close_quietly, record
from facade.validation import MAX_TEXT_CHARS, SynthesisRequest, parse_request
from speech.audio import JSON_WEBSOCKET_FORMATS, RAW_WEBSOCKET_FORMATS, AudioFormat, from_audio_format_param
from speech.errors import SpeechError
from speech.streaming import StreamStats, encoded_stream, pcm_stream

log = logging.getLogger("lector.ws")
router = APIRouter()

SENTENCE_END = re.compile(r"[.!?。！？؟।]+[\"')\]]*\s")
SENTENCE_FINAL = ".!?。！？؟।"
RAW_FLUSH_AT = re.compile(r"[.,!?。！？؟।]")


@dataclass(slots=True)
class Session:
    """One socket's state."""

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
    # (text, contextId, answers a flush/eos with "done"); None ends the worker
    queue: asyncio.Queue[tuple[str, str | None, bool] | None] = field(default_factory=asyncio.Queue)
    generation: int = 0  # bumped by clear: runs of an older generation stop
    unanswered: bool = False  # text was queued since the last "done" (or clear)
    failed: bool = False  # the worker closed the socket with 1011; the reader just stops


def _query(websocket: WebSocket) -> dict[str, Any]:
    params: dict[str, Any] = dict(websocket.query_params)
    if "immediate" in params and "segment" not in params:
        params["segment"] = "immediate" if params.pop("immediate").lower() == "true" else "bySentence"
    return params


async def _open(websocket: WebSocket, *, json_events: bool, endpoint: str, model_default: str | None) -> Session | None:
    services: Services = websocket.app.state.services
    try:
        from facade.deps import bearer_key

        key = bearer_key(websocket.headers, missing_message=e.MISSING_HEADERS)
        if services.authenticator is None:
            raise e.ApiError(401, e.INVALID_KEY)
        principal = await run_in_threadpool(services.authenticator, key)
        params = _query(websocket)
        if model_default and "modelId" not in params:
            params["modelId"] = model_default
        base = parse_request({**params, "text": "-"})
        plan = await run_in_threadpool(resolve, services, base, principal, endpoint=endpoint)
        allowed = JSON_WEBSOCKET_FORMATS if json_events else RAW_WEBSOCKET_FORMATS
        try:
            fmt = from_audio_format_param(params.get("audioFormat") or "pcm", allowed=allowed)
        except SpeechError as exc:
            raise e.ApiError(400, str(exc)) from exc
        segment = params.get("segment", "bySentence")
        if segment not in ("bySentence", "immediate", "never"):
            raise e.ApiError(400, "segment must be one of: bySentence, immediate, never")
        if not await allow_connection(services, principal):
            raise e.ApiError(429, e.WS_LIMIT)
    except Exception as exc:  # noqa: BLE001 - every refusal is an HTTP answer at the upgrade
        response = e.to_response(exc)
        await websocket.send_denial_response(response)
        return None
    await websocket.accept()
    rate = base.sampling_rate or default_rate(plan.model_id, fmt.value)
    return Session(services, principal, base, fmt, rate, segment, json_events, endpoint)


async def _synthesize(websocket: WebSocket, session: Session, text: str, context_id: str | None, done: bool) -> None:
    services = session.services
    started: float | None = time.perf_counter()
    req = replace(session.base, text=text)
    plan: Plan = await run_in_threadpool(resolve, services, req, session.principal, endpoint=session.endpoint)
    stats = StreamStats()
    generation = session.generation
    chunks = encoded_stream(
        pcm_stream(services.synthesizer, plan.voice, plan.units, plan.controls, sample_rate=session.rate, stats=stats),
        session.fmt, session.rate,
    )
    recorded = False

    async def bill() -> None:
        nonlocal recorded
        recorded = True
        await run_in_threadpool(
            record, services, session.principal, req, plan, stats, transport="ws", request_id=uuid.uuid4().hex
        )

    try:
        while session.generation == generation:
            data = await run_in_threadpool(next, chunks, None)
            if data is None:
                break
            if started is not None:
                observe_first_byte("ws", session.fmt.value, since=started)
                started = None
            if session.json_events:
                await websocket.send_text(json.dumps({"type": "chunk", "data": base64.b64encode(data).decode(), "contextId": context_id}))
            else:
                await websocket.send_bytes(data)
        # Billed before "done": a client that saw the run complete is billed even if we die now.
        await bill()
        if session.json_events and session.generation == generation:
            words = stats.words
            await websocket.send_text(json.dumps({
                "type": "timestamps",
                "word_timestamps": {"words": [w.word for w in words], "start": [round(w.start, 3) for w in words],
                                    "end": [round(w.end, 3) for w in words]},
                "contextId": context_id,
            }))
            if done:
                await websocket.send_text(json.dumps({"type": "done", "contextId": context_id}))
    finally:
        if not recorded:
            with anyio.CancelScope(shield=True):  # a hang-up cancels this task; what was made is still billed
                await bill()
        close_quietly(chunks)


async def _worker(websocket: WebSocket, session: Session) -> None:
    """Synthesizes queued runs in order. A failure closes the socket with 1011 at once: a client
    waiting for ``done`` (LiveKit, Pipecat) must learn of it now, not at its next message."""
    try:
        while (item := await session.queue.get()) is not None:
            text, context_id, done = item
            if text.strip():
                await _synthesize(websocket, session, text, context_id, done)
            elif done and session.json_events:  # a flush with nothing left to say: everything before it is out
                await websocket.send_text(json.dumps({"type": "done", "contextId": context_id}))
    except (WebSocketDisconnect, asyncio.CancelledError):
        raise
    except Exception as exc:  # noqa: BLE001 - every failure of a run is a 1011 close
        session.failed = True
        await _close_failed(websocket, exc)


async def _close_failed(websocket: WebSocket, exc: Exception) -> None:
    """Close with 1011 and ``<status>: <message>``, the HTTP answer the same failure would get."""
    mapped = (exc.status, exc.message) if isinstance(exc, e.ApiError) else e.lookup(exc)
    status, message = mapped or (500, e.INTERNAL)
    if status >= 500:
        log.exception("websocket failed", exc_info=exc)
    with contextlib.suppress(Exception):
        await websocket.close(1011, f"{status}: {message}"[:120])


async def _enqueue(session: Session, runs: list[tuple[str, str | None]], *, done: bool = False) -> None:
    """Queue runs. With ``done`` (flush, eos) and text queued since the last ``done``, the last run,
    or an empty marker after the runs already queued, answers ``done``."""
    session.unanswered = session.unanswered or bool(runs)
    answer = done and session.unanswered
    if answer and not runs:
        runs = [("", session.context_id)]
    for i, (text, context_id) in enumerate(runs):
        await session.queue.put((text, context_id, answer and i == len(runs) - 1))
    if answer:
        session.unanswered = False


def _take(session: Session, *, whole: bool) -> list[tuple[str, str | None]]:
    """Cut the buffer into runs to synthesize: everything (flush) or up to the last sentence end."""
    text = "".join(t for t, _ in session.buffer)
    context_id = session.buffer[-1][1] if session.buffer else session.context_id
    if whole:
        session.buffer.clear()
        return [(text, context_id)] if text.strip() else []
    cut = 0
    for match in SENTENCE_END.finditer(text):
        cut = match.end()
    if text.rstrip() and text.rstrip()[-1] in SENTENCE_FINAL:
        cut = len(text)  # a message that ends a sentence without trailing space
    if cut == 0:
        return []
    session.buffer[:] = [(text[cut:], context_id)] if text[cut:] else []
    return [(text[:cut], context_id)]


def _error(session: Session, message: str) -> str:
    """An ``error`` event; it carries the current contextId, since clients (Pipecat) route by it."""
    return json.dumps({"type": "error", "message": message, "contextId": session.context_id})


async def _json_loop(websocket: WebSocket, session: Session) -> None:
    worker = asyncio.create_task(_worker(websocket, session))
    try:
        while True:
            raw = await websocket.receive_text()
            try:
                message = json.loads(raw)
                if not isinstance(message, dict):
                    raise ValueError
            except ValueError:
                await websocket.send_text(_error(session, e.NOT_AN_OBJECT))
                continue
            if "contextId" in message:
                session.context_id = message.get("contextId")
            operation = message.get("operation")
            done = False
            if operation is None:
                text = message.get("text")
                if not isinstance(text, str):
                    await websocket.send_text(_error(session, e.TEXT_NOT_STRING if "text" in message else e.TEXT_REQUIRED))
                    continue
                if len(text) > MAX_TEXT_CHARS:
                    raise e.ApiError(400, e.TEXT_TOO_LONG)  # the seed's 1011 "400: text is too long"
                session.buffer.append((text, session.context_id))
                if session.segment == "immediate":
                    runs = _take(session, whole=True)
                elif session.segment == "bySentence":
                    runs = _take(session, whole=False)
                else:
                    runs = []
            elif operation == "flush":
                runs, done = _take(session, whole=True), True
            elif operation == "clear":
                session.buffer.clear()
                session.generation += 1
                session.unanswered = False
                while not session.queue.empty():
                    session.queue.get_nowait()
                continue
            elif operation == "eos":
                await _enqueue(session, _take(session, whole=True), done=True)
                await session.queue.put(None)
                await worker
                await websocket.close(1000)
                return
            else:
                await websocket.send_text(_error(session, f"unknown operation {operation}"))
                continue
            await _enqueue(session, runs, done=done)
    finally:
        if not worker.done():
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await worker


async def _raw_loop(websocket: WebSocket, session: Session) -> None:
    worker = asyncio.create_task(_worker(websocket, session))
    try:
        while True:
            text = await websocket.receive_text()
            marker = text.strip()
            if marker == "<CLEAR>":
                session.buffer.clear()
                session.generation += 1
                continue
            if marker in ("<FLUSH>", "<EOS>"):
                await _enqueue(session, _take(session, whole=True))
                if marker == "<EOS>":
                    await session.queue.put(None)
                    await worker
                    await websocket.close(1000)
                    return
                continue
            session.buffer.append((text, None))
            if RAW_FLUSH_AT.search(text):
                await _enqueue(session, _take(session, whole=True))
    finally:
        if not worker.done():
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await worker


async def _serve(websocket: WebSocket, *, json_events: bool, endpoint: str, model_default: str | None = None) -> None:
    session = await _open(websocket, json_events=json_events, endpoint=endpoint, model_default=model_default)
    if session is None:
        return
    try:
        await (_json_loop if json_events else _raw_loop)(websocket, session)
    except WebSocketDisconnect:
        return
    except Exception as exc:  # noqa: BLE001 - after the upgrade, failures close with 1011
        if not session.failed:  # else the worker already closed it, and reading after that fails
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
