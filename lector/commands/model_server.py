"""``lector model-server``: voices behind ``/invocations`` on port 8080, with dynamic batching.

The voices are catalog speakers (``--voice``, default ``LECTOR_MODEL_VOICE``, else ``joe``):
one (``joe``), several (``owen,ivy,julien``) or ``neural``, every neural voice of the catalog
(VITS and Kokoro: what a cloud facade sends to ``MODEL_URL``). Kokoro voices share one model, so
a lineup costs one model plus a style pack per voice. They are loaded through the same
synthesizer wiring as every other process, so device, threads and the weights cache follow
``LECTOR_DEVICE``/``LECTOR_TORCH_THREADS``/``LECTOR_DATA_DIR``. Requests name their speaker
(``voice``); the service refuses any other (400) rather than substitute.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
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


def find_voices(catalog: Any, spec: str) -> list[Any]:
    """``joe``, ``owen,ivy`` or ``neural`` (every VITS and Kokoro voice), each speaker once."""
    from facade.remote_engine import is_neural

    if spec.strip() == "neural":
        voices = {v.speaker: v for v in catalog.voices if is_neural(v)}
        return list(voices.values())
    speakers = list(dict.fromkeys(s.strip() for s in spec.split(",") if s.strip()))
    if not speakers:
        raise typer.BadParameter("name at least one speaker", param_hint="--voice")
    return [find_voice(catalog, speaker) for speaker in speakers]


def package_voices(path: Path | None) -> str | None:
    """The ``--voice`` spec a language package provides (``LECTOR_MODEL_VOICE_FILE``: the
    ``speakers`` file of ``{registry}/package/arcana/<language>``, one speaker per line)."""
    if path is None:
        return None
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise typer.BadParameter(f"cannot read the voice package file {path}: {exc.strerror}") from None
    speakers = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    return ",".join(speakers) or None


def engine_factories(settings: Settings, spec: str) -> dict[str, Callable[[], Engine]]:
    """Speaker -> loader for each voice of ``spec``, resolved now, loaded by one synthesizer (so
    voices sharing weights share an engine, and Kokoro voices one model)."""
    from lector.wiring import build_catalog, build_synthesizer

    voices = find_voices(build_catalog(settings), spec)
    synthesizer: list[Any] = []

    def loader(voice: Any) -> Callable[[], Engine]:
        def load() -> Engine:
            if not synthesizer:
                # The service batches with its own Batcher: engines must not batch a second time.
                synthesizer.append(build_synthesizer(settings.model_copy(update={"engine_batching": "off"})))
            engine: Engine = synthesizer[0].engine(voice)
            return engine

        return load

    return {voice.speaker: loader(voice) for voice in voices}


def serving_app(**options: Any) -> Any:
    """The model service as lector runs it: ``facade.model_service``'s app (``options`` are
    ``create_model_app``'s) behind the API's request counter, ``lector_http_requests_total`` by
    route and status (``facade.metrics``: one counter and one middleware for every HTTP process)."""
    from facade.metrics import MetricsMiddleware
    from facade.model_service import create_model_app

    app = create_model_app(**options)
    app.add_middleware(MetricsMiddleware)
    return app


def command(
    port: int = typer.Option(8080, help="the vendor API contract's model service port"),
    host: str = typer.Option(None, help="default: LECTOR_HOST"),
    voice: str = typer.Option(
        None, help="catalog speaker(s) to serve: joe, owen,ivy or neural; default LECTOR_MODEL_VOICE or joe"
    ),
    window_ms: float = typer.Option(None, help="batching window; default LECTOR_MODEL_WINDOW_MS (5)"),
    max_batch: int = typer.Option(None, help="largest batch; default LECTOR_MODEL_MAX_BATCH (16); 1 turns batching off"),
) -> None:
    """Run the model service: POST /invocations, GET /readyz, GET /livez."""
    import uvicorn

    from lector.logs import configure, uvicorn_options

    settings = Settings()
    configure(settings.log_format, settings.log_level)
    spec = voice or settings.model_voice or package_voices(settings.model_voice_file) or DEFAULT_VOICE
    app = serving_app(
        voices=engine_factories(settings, spec),
        window_ms=settings.model_window_ms if window_ms is None else window_ms,
        max_batch=max_batch or settings.model_max_batch,
    )
    uvicorn.run(app, host=host or settings.host, port=port, log_level="info", **uvicorn_options(settings.log_format))
