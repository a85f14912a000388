"""The self-hosted apps are composed from their own routers, not the cloud app with routes cut out.

Built without serving (no lifespan runs): what is mounted is what the app object holds.
"""

from __future__ import annotations

from pathlib import Path

from starlette.routing import Mount

from facade.app import create_app
from facade.console import PREFIX as CONSOLE
from facade.selfhosted import create_selfhosted_app, create_selfhosted_ws_app
from facade.selfhosted_runtime import SelfHostedConfig, SelfHostedRuntime
from speech.voices import Catalog

SHARED = {"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc", "/metrics"}


def _paths(app: object) -> set[str]:
    """Every route's path, through FastAPI's included routers (kept as such, built lazily)."""
    found: set[str] = set()
    pending = list(app.router.routes)  # type: ignore[attr-defined]
    while pending:
        route = pending.pop()
        included = getattr(route, "original_router", None)
        if included is not None:
            pending.extend(included.routes)
        else:
            found.add(route.path)
    return found


def _middleware(app: object) -> set[str]:
    return {m.cls.__name__ for m in app.user_middleware}  # type: ignore[attr-defined]


def test_each_app_holds_its_own_routes_and_nothing_of_the_console(tmp_path: Path) -> None:
    runtime = SelfHostedRuntime(SelfHostedConfig(api_keys=["k"], model_url=None, usage_spool_dir=tmp_path),
                                catalog_factory=Catalog.load)
    http = create_selfhosted_app(runtime.config, runtime=runtime)
    sockets = create_selfhosted_ws_app(runtime)
    assert _paths(http) == SHARED | {"/", "/health"}
    assert _paths(sockets) == SHARED | {"/ws", "/ws2", "/ws3"}
    cloud = create_app(lambda: (None, lambda: None))  # type: ignore[arg-type, return-value]
    assert CONSOLE in {r.path for r in cloud.router.routes if isinstance(r, Mount)}
    # The console's headers middleware came with the cloud app and stayed after its routes were
    # deleted; a composed app never had it.
    console_only = _middleware(cloud) - _middleware(http)
    assert console_only == {"_SecurityHeaders"}
    assert _middleware(http) == _middleware(sockets)
