"""``bench.latency --embedded`` brings its own PostgreSQL and Redis, so a bench run on a bare
machine measures lector and not whatever services the host happens to run (an integration test: it
starts both servers)."""

from __future__ import annotations

import psycopg
import pytest
import redis
import sqlalchemy as sa

from bench import latency

pytestmark = pytest.mark.integration


def test_embedded_backends_bring_their_own_postgres_and_redis() -> None:
    with latency.backends(embedded=True) as services:
        assert "127.0.0.1:5432" not in services.admin and not services.redis_url.endswith(":6379/15")
        with psycopg.connect(services.admin, autocommit=True) as conn:
            conn.execute("CREATE DATABASE bench_probe")
        engine = sa.create_engine(services.database_url("bench_probe"))
        try:
            with engine.connect() as conn:
                assert conn.execute(sa.text("SELECT current_database()")).scalar() == "bench_probe"
        finally:
            engine.dispose()
        client = redis.Redis.from_url(services.redis_url)
        assert client.ping()
        client.close()
    with pytest.raises(redis.ConnectionError):
        redis.Redis.from_url(services.redis_url, socket_connect_timeout=0.5).ping()
