"""PostgreSQL unreachable: the vendor API contract's 500 ``Database error``, plain text, quickly."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from facade.app import create_app
from lector.api import cloud_services
from lector.settings import Settings
from tests.support.servers import free_port


def test_database_down_is_500_database_error(redis_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings = Settings(database_url=f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/lector",
                        redis_url=redis_url, data_dir=tmp_path)
    app = create_app(lambda: cloud_services(settings))
    with TestClient(app, raise_server_exceptions=False) as client:
        started = time.monotonic()
        response = client.post("/v1/service-tts", headers={"Authorization": "Bearer lk_" + "a" * 40},
                               json={"text": "hi", "speaker": "joe"})
        elapsed = time.monotonic() - started
    assert (response.status_code, response.text) == (500, "Database error")
    assert response.headers["content-type"].startswith("text/plain")
    assert elapsed < 5
