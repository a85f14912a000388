"""The model service: a voice behind ``POST /invocations`` with dynamic batching (``lector model-server``).

``app`` composes the FastAPI app from ``health`` and ``synthesis``; ``state`` loads the voices;
``speech.batcher`` runs concurrent requests as one engine call; ``facade.invocations_format`` is the
request/response format shared with the client (``facade.remote_engine``).
"""

from facade.model_service.app import create_model_app
from speech.batcher import Batcher, BatchStats

__all__ = ["BatchStats", "Batcher", "create_model_app"]
