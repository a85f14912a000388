"""``lector serve --self-hosted``: the API service of a self-hosted pair, HTTP and WebSocket ports.

The vendor API contract puts HTTP on 8000 and the JSON WebSocket on 8001. Both are served by one process (two
``uvicorn.Server`` instances in one event loop) so they share one runtime: the licence gate, the
usage spool and the pooled connections to the model service. Signals are handled here, once,
and stop both servers; either server stopping stops the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Iterator
from typing import Any

import uvicorn

from facade.selfhosted import create_selfhosted_app, create_selfhosted_ws_app
from facade.selfhosted_runtime import SelfHostedConfig, parse_keys, read_keys_file
from lector.settings import Settings
from lector.wiring import build_catalog

log = logging.getLogger("lector.selfhosted")

#: With nothing configured, the API looks for a model service on the same machine.
LOCAL_MODEL_URL = "http://127.0.0.1:8080/invocations"


def config_from_settings(settings: Settings) -> SelfHostedConfig:
    arcana = {
        "en": settings.arcana_eng_model_url, "es": settings.arcana_spa_model_url,
        "fr": settings.arcana_fra_model_url, "de": settings.arcana_ger_model_url,
    }
    return SelfHostedConfig(
        api_keys=parse_keys(settings.api_keys, read_keys_file(settings.api_keys_file)),
        model_url=settings.model_url or LOCAL_MODEL_URL,
        arcana_urls={lang: url for lang, url in arcana.items() if url},
        license_token=settings.license.get_secret_value() if settings.license else None,
        license_file=str(settings.license_file) if settings.license_file else None,
        license_public_key=settings.license_public_key,
        license_url=settings.license_url,
        license_check_interval_s=settings.license_check_interval_s,
        usage_url=settings.usage_url,
        usage_spool_dir=settings.usage_spool_dir or settings.data_dir / "usage-spool",
        usage_flush_interval_s=settings.usage_flush_interval_s,
        model_connect_timeout_s=settings.model_connect_timeout_s,
        model_read_timeout_s=settings.model_read_timeout_s,
    )


class _Server(uvicorn.Server):
    """Signals are handled by ``serve_apps`` for both servers, not by each server."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve_apps(apps: list[tuple[Any, int]], *, host: str, log_level: str = "info") -> None:
    """Serve each ``(app, port)`` until a signal or until any of them stops."""
    servers = [
        _Server(uvicorn.Config(app, host=host, port=port, log_level=log_level, ws="websockets", lifespan="on"))
        for app, port in apps
    ]
    loop = asyncio.get_running_loop()

    def stop() -> None:
        for server in servers:
            server.should_exit = True

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop)
    tasks = [asyncio.create_task(server.serve()) for server in servers]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        stop()
        await asyncio.gather(*tasks, return_exceptions=True)
        for task in done:
            task.result()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)


def serve_selfhosted(settings: Settings, *, host: str | None = None, port: int | None = None,
                     ws_port: int | None = None) -> int:
    """Run the self-hosted API until stopped; returns the exit status."""
    config = config_from_settings(settings)
    if not config.api_keys:
        log.warning("no API keys configured (LECTOR_API_KEYS / LECTOR_API_KEYS_FILE): every request gets 401")
    http_app = create_selfhosted_app(config, catalog_factory=lambda: build_catalog(settings))
    ws_app = create_selfhosted_ws_app(http_app.state.runtime)
    asyncio.run(serve_apps(
        [(http_app, port or settings.port), (ws_app, ws_port or settings.ws_port)], host=host or settings.host,
    ))
    return 0
