"""The model service's own metrics; ``GET /metrics`` serves them with the engine metrics
(``lector_synthesis_seconds``, ``lector_audio_seconds_total``, GPU memory) that the engines
loaded through ``lector.wiring`` record in the same registry."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Histogram, generate_latest
from starlette.responses import Response

MODEL_BATCH_SIZE = Histogram(
    "lector_model_batch_size", "Sentences per engine call of the dynamic batcher",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128),
)


def metrics_response() -> Response:
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)
