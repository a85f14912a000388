"""The console: the web pages under ``/console``, served as plain files (no build step).

Every response under ``/console`` carries a strict Content-Security-Policy: scripts and styles
only from this origin (no inline script, no ``eval``), nothing framed, no plugins. Media may
come from the object store's presigned URLs (another origin: ``media-src`` allows it); the
console's own requests go to this origin only (``connect-src 'self'`` covers ``ws:`` to it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

STATIC_DIR: Final = Path(__file__).resolve().parent / "console"
PREFIX: Final = "/console"
CSP: Final = "; ".join([
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
])
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

    @app.middleware("http")
    async def console_headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await call_next(request)
        if request.url.path == PREFIX or request.url.path.startswith(f"{PREFIX}/"):
            response.headers.update(SECURITY_HEADERS)
        return response
