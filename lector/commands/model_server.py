"""``lector model-server``: one voice behind ``/invocations`` on port 8080, with dynamic batching.

The voice is a catalog speaker (``--voice``, default ``LECTOR_MODEL_VOICE``, else ``joe``) and is
loaded through the same synthesizer wiring as every other process, so device, threads and the
weights cache follow ``LECTOR_DEVICE``/``LECTOR_TORCH_THREADS``/``LECTOR_DATA_DIR``. Requests
must name that speaker (``voice``); the service refuses any other rather than substitute.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

import typer

from lector.settings import Settings
from speech.engines.base import Engine

DEFAULT_VOICE = "joe"


def find_voice(catalog: Any, speaker: str) -> Any:
    """The catalog voice with this speaker name (a speaker is one voice across the lineups)."""
    for voice in catalog.voices:
        if voice.speaker == speaker:
            return voice
    known = ", ".join(sorted({v.speaker for v in catalog.voices}))
    raise typer.BadParameter(f"no voice {speaker!r} in the catalog (known: {known})", param_hint="--voice")


def engine_factory(settings: Settings, speaker: str) -> Callable[[], Engine]:
    """Resolve the voice now (a typo fails at start), load it when the service asks."""
    from lector.wiring import build_catalog, build_synthesizer

    voice = find_voice(build_catalog(settings), speaker)

    def load() -> Engine:
        return build_synthesizer(settings).engine(voice)

    return load


def command(
    port: int = typer.Option(8080, help="the seed's model service port"),
    host: str = typer.Option(None, help="default: LECTOR_HOST"),
    voice: str = typer.Option(None, help="catalog speaker to serve; default LECTOR_MODEL_VOICE or joe"),
    window_ms: float = typer.Option(None, help="batching window; default LECTOR_MODEL_WINDOW_MS (5)"),
    max_batch: int = typer.Option(None, help="largest batch; default LECTOR_MODEL_MAX_BATCH (16); 1 turns batching off"),
) -> None:
    """Run the model service: POST /invocations, GET /readyz, GET /livez."""
    import uvicorn

    from workers.model_server import create_model_app

    settings = Settings()
    logging.basicConfig(level="INFO", format="%(asctime)s %(levelname)s %(name)s %(message)s", stream=sys.stderr)
    speaker = voice or settings.model_voice or DEFAULT_VOICE
    app = create_model_app(
        engine_factory(settings, speaker),
        window_ms=settings.model_window_ms if window_ms is None else window_ms,
        max_batch=max_batch or settings.model_max_batch,
        voice=speaker,
    )
    uvicorn.run(app, host=host or settings.host, port=port, log_level="info")
