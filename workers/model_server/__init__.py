"""The model service: a voice behind ``POST /invocations`` with dynamic batching (``lector model-server``).

``app`` builds the FastAPI app, ``speech.batcher`` runs concurrent requests as one engine call, ``wire``
is the request/response format shared with the client (``facade.remote_engine``).
"""

from speech.batcher import Batcher, BatchStats
from workers.model_server.app import create_model_app

__all__ = ["BatchStats", "Batcher", "create_model_app"]
