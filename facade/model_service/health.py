"""Liveness that fails once loading failed (so an orchestrator restarts the container),
readiness that means a warmed-up voice, the batcher's counters and the Prometheus page."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response

from facade.model_service.metrics import metrics_response
from facade.model_service.state import ModelState, Phase


async def model_state(request: Request) -> ModelState:
    """The app's one ``ModelState`` (``app.state.model``), set by ``create_model_app``."""
    state: ModelState = request.app.state.model
    return state


ModelStateDep = Annotated[ModelState, Depends(model_state)]

router = APIRouter()


@router.get("/livez")
async def livez(state: ModelStateDep) -> Response:
    if state.phase is Phase.FAILED:
        return JSONResponse({"status": "failed", "error": state.error}, status_code=500)
    return JSONResponse({"status": "alive", "phase": state.phase})


@router.get("/readyz")
async def readyz(state: ModelStateDep) -> Response:
    if state.phase is not Phase.READY:
        return JSONResponse({"ready": False, "phase": state.phase}, status_code=503)
    served = state.config.served
    return JSONResponse({"ready": True, "voice": served[0] if served else None, "voices": served,
                         "sampleRate": state.sample_rate, "sampleRates": state.sample_rates,
                         "readyAfterSeconds": state.ready_after_s})


@router.get("/metrics", include_in_schema=False)
async def metrics() -> Response:
    return metrics_response()


@router.get("/stats")
async def stats(state: ModelStateDep) -> Response:
    body: dict[str, object] = {"windowMs": state.config.window_ms, "maxBatch": state.config.max_batch,
                               "phase": state.phase}
    if state.batcher is not None:
        body.update(state.batcher.stats.to_json())
    return JSONResponse(body)
