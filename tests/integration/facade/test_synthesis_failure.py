"""The seed: an unhandled 500 from the streaming synthesis endpoint is JSON ``{"error": ...}``.

The engine is made to fail by a fault injected into lector's own synthesizer (an engine that
raises); auth and billing run for real against PostgreSQL."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from facade.app import create_app
from facade.auth import db_authenticator
from facade.deps import Services
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from store.db import create_account, create_key, session_scope


class _BrokenEngine:
    sample_rate = 22050

    def synthesize(self, sentences: Any, options: Any = None) -> Any:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    def phonemize(self, text: str) -> str:
        return text


def test_a_failing_engine_is_a_json_500(db_sessionmaker: sessionmaker[Session]) -> None:
    @contextlib.contextmanager
    def sessions() -> Iterator[Session]:
        with session_scope(db_sessionmaker) as session:
            yield session

    with sessions() as session:
        account = create_account(session=session, name="broken-engine")
        key = create_key(session=session, account_id=account.id)[1]
    services = Services(catalog=Catalog.load(), synthesizer=Synthesizer(lambda voice: _BrokenEngine()),  # type: ignore[arg-type]
                        session_factory=sessions, objects=None, dispatcher=None, redis=None,
                        authenticator=db_authenticator(sessions))
    with TestClient(create_app(lambda: (services, lambda: None)), raise_server_exceptions=False) as client:
        response = client.post("/v1/service-tts", headers={"Authorization": f"Bearer {key}", "Accept": "audio/wav"},
                               json={"text": "This will fail.", "speaker": "joe"})
    assert (response.status_code, response.json()) == (500, {"error": "internal error"})
    assert response.headers["content-type"].startswith("application/json")
