"""``/textnorm`` when its engine fails: the vendor API contract's 502 ``text normalization engine error`` as JSON.

The normaliser is in-process, so "cannot reach its engine" is simulated by making it raise (a
fault injected into lector's own code, not a mock of a third party); auth runs for real against
PostgreSQL."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from facade.app import create_app
from facade.routes import utility
from tests.support.services import services_with_key


def test_a_failing_normaliser_is_502_json(db_sessionmaker: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch) -> None:
    services, key = services_with_key(db_sessionmaker, "textnorm-502")
    app = create_app(lambda: (services, lambda: None))

    def broken(text: str, lang: str) -> str:
        raise ConnectionError("normaliser unreachable")

    with TestClient(app, raise_server_exceptions=False) as client:
        ok = client.post("/textnorm", headers={"Authorization": f"Bearer {key}"}, json={"text": "3 cats", "lang": "en"})
        assert (ok.status_code, ok.json()) == (200, {"normalized": "three cats"})
        monkeypatch.setattr(utility, "normalize", broken)
        failed = client.post("/textnorm", headers={"Authorization": f"Bearer {key}"}, json={"text": "3 cats", "lang": "en"})
    assert (failed.status_code, failed.json()) == (502, {"error": "text normalization engine error"})
