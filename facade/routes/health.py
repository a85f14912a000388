"""``GET /livez`` and ``GET /readyz`` of the cloud API, for compose and Kubernetes probes.

``/livez`` says the process serves HTTP (restart it if not). ``/readyz`` says it can serve
customers: PostgreSQL answers ``SELECT 1``, Redis answers ``PING`` and the object store answers
a lookup, each within ``CHECK_TIMEOUT_S``, checked at once. The app only starts answering after
its warm-up synthesis (the lifespan), so a ready API has already spoken once. No auth: probes
carry none, and the bodies name only the checks, never hosts or errors' internals.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text

from facade.deps import Services, ServicesDep

log = logging.getLogger("lector.health")
router = APIRouter()
CHECK_TIMEOUT_S = 3.0
PROBE_KEY = "health/readyz-probe"  # never written: a lookup of a missing key still reaches the store


@router.get("/livez", include_in_schema=False)
async def livez() -> JSONResponse:
    return JSONResponse({"status": "alive"})


@router.get("/readyz", include_in_schema=False)
async def readyz(services: ServicesDep) -> JSONResponse:
    checks = checks_of(services)
    results = await asyncio.gather(*(_run(name, check) for name, check in checks.items()))
    status = dict(zip(checks, results, strict=True))
    ready = all(result == "ok" for result in results)
    return JSONResponse({"ready": ready, "checks": status}, status_code=200 if ready else 503)


def checks_of(services: Services) -> dict[str, Callable[[], Any]]:
    checks: dict[str, Callable[[], Any]] = {}
    if services.storage.session_factory is not None:
        checks["postgresql"] = lambda: _select_one(services)
    if services.brokers.redis is not None:
        checks["redis"] = services.brokers.redis.ping
    if (objects := services.storage.objects) is not None:
        checks["objects"] = lambda: objects.exists(PROBE_KEY)
    return checks


def _select_one(services: Services) -> None:
    assert services.storage.session_factory is not None
    with services.storage.session_factory() as session:
        session.execute(text("SELECT 1"))


async def _run(name: str, check: Callable[[], Any]) -> str:
    try:
        await asyncio.wait_for(asyncio.to_thread(check), CHECK_TIMEOUT_S)
    except TimeoutError:
        log.warning("readiness: %s did not answer within %.0f s", name, CHECK_TIMEOUT_S)
        return "timeout"
    except Exception as exc:  # noqa: BLE001 - any failure means not ready; the log says why
        log.warning("readiness: %s unavailable: %s", name, exc)
        return "unavailable"
    return "ok"
