"""``/textnorm`` when its engine fails: the seed's 502 ``text normalization engine error`` as JSON.

The normaliser is in-process, so "cannot reach its engine" is simulated by making it raise (a
fault injected into lector's own code, not a mock of a third party); auth runs for real against
PostgreSQL."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from facade.app import create_app
from facade.auth import db_authenticator
from facade.deps import Services
from facade.routes import utility
from store.db import create_account, create_key, session_scope


def test_a_failing_normaliser_is_502_json(db_sessionmaker: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch) -> None:
    @contextlib.contextmanager
    def sessions() -> Iterator[Session]:
        with session_scope(db_sessionmaker) as session:
            yield session

    with sessions() as session:
        account = create_account(session=session, name="textnorm-502")
        key = create_key(session=session, account_id=account.id)[1]
    services = Services(catalog=None, synthesizer=None, session_factory=sessions, objects=None,  # type: ignore[arg-type]
                        dispatcher=None, redis=None, authenticator=db_authenticator(sessions), admin_token=None)
    app = create_app(lambda: (services, lambda: None))

    def broken(text: str, lang: str) -> str:
        raise ConnectionError("normaliser unreachable")

    with TestClient(app, raise_server_exceptions=False) as client:
        ok = client.post("/textnorm", headers={"Authorization": f"Bearer {key}"}, json={"text": "3 cats", "lang": "en"})
        assert (ok.status_code, ok.json()) == (200, {"normalized": "three cats"})
        monkeypatch.setattr(utility, "normalize", broken)
        failed = client.post("/textnorm", headers={"Authorization": f"Bearer {key}"}, json={"text": "3 cats", "lang": "en"})
    assert (failed.status_code, failed.json()) == (502, {"error": "text normalization engine error"})
