"""The vendor API contract: an unhandled 500 from the streaming synthesis endpoint is JSON ``{"error": ...}``.

The engine is made to fail by a fault injected into lector's own synthesizer (an engine that
raises); auth and billing run for real against PostgreSQL."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from facade.app import create_app
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from tests.support.services import services_with_key


class _BrokenEngine:
    sample_rate = 22050

    def synthesize(self, sentences: Any, options: Any = None) -> Any:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    def phonemize(self, text: str) -> str:
        return text


def test_a_failing_engine_is_a_json_500(db_sessionmaker: sessionmaker[Session]) -> None:
    services, key = services_with_key(db_sessionmaker, "broken-engine", catalog=Catalog.load(),
                                      synthesizer=Synthesizer(lambda voice: _BrokenEngine()))
    with TestClient(create_app(lambda: (services, lambda: None)), raise_server_exceptions=False) as client:
        response = client.post("/v1/service-tts", headers={"Authorization": f"Bearer {key}", "Accept": "audio/wav"},
                               json={"text": "This will fail.", "speaker": "joe"})
    assert (response.status_code, response.json()) == (500, {"error": "internal error"})
    assert response.headers["content-type"].startswith("application/json")
