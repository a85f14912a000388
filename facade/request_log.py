"""Request ids for logs: each HTTP request and WebSocket gets one, bound for every log line it
causes (``scheduler.log_context``), answered in ``X-Request-ID``, and one access line at the end
(logger ``lector.access``: the JSON access log; quiet in text mode, where uvicorn writes its own).

The account is bound where the key is checked (``facade.deps.current_principal``) and the job by
``bind_path_ids``, an app-wide dependency that sees the matched route's path parameters.
"""

from __future__ import annotations

import logging
import time
import uuid

from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scheduler import log_context

access = logging.getLogger("lector.access")


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        request_id = uuid.uuid4().hex
        token = log_context.start(request_id=request_id)
        started = time.perf_counter()
        status = 0

        async def tagged_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            elif message["type"] == "websocket.accept":
                status = 101
            await send(message)

        try:
            await self.app(scope, receive, tagged_send)
        finally:
            access.info(
                "%s %s %s", scope.get("method", "WEBSOCKET"), scope.get("path", ""), status or 500,
                extra={"method": scope.get("method", "WEBSOCKET"), "path": scope.get("path", ""),
                       "status": status or 500, "duration_ms": round((time.perf_counter() - started) * 1000, 1)},
            )
            log_context.reset(token)


async def bind_path_ids(connection: HTTPConnection) -> None:
    """Bind the job of routes under ``/v1/jobs/{job_id}`` (async: it runs in the request's task)."""
    job_id = connection.path_params.get("job_id")
    if job_id:
        log_context.bind(job_id=job_id)
