"""The HTTP edge: a cap on request bodies and a deadline for receiving them.

A pure ASGI middleware, so it acts before any handler reads a byte: a declared
``Content-Length`` over the cap is answered 413 at once (the client need not send the rest), a
body that grows past the cap while streaming in (chunked uploads) is cut off with the same 413,
and a body that trickles in slower than ``timeout_s`` allows is a 408. The answers are raised as
``facade.errors.ApiError`` from ``receive`` so that the routes' own error paths (JSON bodies on
``/textnorm``, plain text elsewhere) give them; only the declared-length case answers here.
"""

from __future__ import annotations

import time
from typing import Any

import anyio

from facade import errors as e

Scope = dict[str, Any]
Message = dict[str, Any]


class BodyLimit:
    """Wraps an ASGI app; ``max_bytes`` and ``timeout_s`` come from ``Settings``."""

    def __init__(self, app: Any, *, max_bytes: int, timeout_s: float) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            response = e.to_response(e.body_too_large(self.max_bytes), path=scope.get("path", ""))
            await response(scope, receive, send)
            return
        await self.app(scope, _Receiver(receive, self.max_bytes, self.timeout_s), send)


class _Receiver:
    """``receive`` with a byte count and a deadline, for the body only: once the body is in,
    it passes through untouched (a streaming response listens on it for the disconnect)."""

    def __init__(self, receive: Any, max_bytes: int, timeout_s: float) -> None:
        self._receive = receive
        self._max_bytes = max_bytes
        self._timeout_s = timeout_s
        self._deadline: float | None = None
        self._received = 0
        self._body_done = False

    async def __call__(self) -> Message:
        if self._body_done:
            return await self._receive()  # type: ignore[no-any-return]
        if self._deadline is None:
            self._deadline = time.monotonic() + self._timeout_s
        with anyio.move_on_after(max(0.0, self._deadline - time.monotonic())) as scope:
            message: Message = await self._receive()
        if scope.cancelled_caught:
            raise e.ApiError(408, e.BODY_TIMEOUT)
        if message["type"] == "http.request":
            self._received += len(message.get("body", b""))
            if self._received > self._max_bytes:
                raise e.body_too_large(self._max_bytes)
            self._body_done = not message.get("more_body", False)
        return message


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
