"""``/livez`` and ``/readyz`` of the cloud API, built as ``lector serve`` builds it
(``cloud_services``) on real PostgreSQL, Redis and Swift. PostgreSQL is reached through a TCP
relay that the test cuts and restores: the machine's PostgreSQL itself stays up."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url

from facade.app import create_app
from lector.api import cloud_services
from lector.settings import Settings
from tests.support.relay import Relay

pytestmark = pytest.mark.integration


@pytest.fixture
def relay(pg_url: str) -> Iterator[Relay]:
    url = make_url(pg_url)
    result = Relay(url.host or "127.0.0.1", url.port or 5432)
    try:
        yield result
    finally:
        result.close()


@pytest.fixture
def client(stack_env: dict[str, str], pg_url: str, relay: Relay, tmp_path) -> Iterator[TestClient]:  # type: ignore[no-untyped-def]
    through_relay = make_url(pg_url).set(port=relay.port).render_as_string(hide_password=False)
    values = {k.removeprefix("LECTOR_").lower(): v for k, v in stack_env.items() if k.startswith("LECTOR_")}
    settings = Settings(**{**values, "database_url": through_relay, "data_dir": str(tmp_path)})
    app = create_app(lambda: cloud_services(settings))
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def test_readyz_follows_postgresql(client: TestClient, relay: Relay) -> None:
    assert client.get("/livez").json() == {"status": "alive"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"ready": True, "checks": {"postgresql": "ok", "redis": "ok", "objects": "ok"}}

    relay.cut()
    down = client.get("/readyz")
    assert down.status_code == 503
    assert down.json()["ready"] is False
    assert down.json()["checks"]["postgresql"] in ("unavailable", "timeout")
    assert down.json()["checks"]["redis"] == "ok" and down.json()["checks"]["objects"] == "ok"
    assert client.get("/livez").status_code == 200  # alive all the same: no restart for a database outage

    relay.restore()
    assert client.get("/readyz").status_code == 200
