"""The console: the web pages under ``/console``, served as plain files (no build step).

Every response under ``/console`` carries a strict Content-Security-Policy: scripts and styles
only from this origin (no inline script, no ``eval``), nothing framed, no plugins. Media may
come from the object store's presigned URLs (another origin: ``media-src`` allows it); the
console's own requests go to this origin only (``connect-src 'self'`` covers ``ws:`` to it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATIC_DIR: Final = Path(__file__).resolve().parent / "console"
PREFIX: Final = "/console"
CSP: Final = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: blob:",
        "media-src 'self' blob: https: http:",
        "connect-src 'self'",
        "form-action 'none'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "object-src 'none'",
    ]
)
SECURITY_HEADERS: Final = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def install(app: FastAPI) -> None:
    """Mount the pages and add the headers; ``/console`` itself redirects to ``/console/``."""

    @app.get(PREFIX, include_in_schema=False)
    async def console_root() -> RedirectResponse:
        return RedirectResponse(f"{PREFIX}/", status_code=308)

    app.mount(PREFIX, StaticFiles(directory=STATIC_DIR, html=True), name="console")

    app.add_middleware(_SecurityHeaders)


class _SecurityHeaders:
    """The console's headers on its own paths. A pure ASGI middleware, not ``@app.middleware``:
    Starlette's ``BaseHTTPMiddleware`` wraps errors raised while a body is read (the body cap's
    413, its deadline's 408) in an exception group, which then answers 500."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == PREFIX or path.startswith(f"{PREFIX}/")):
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)
