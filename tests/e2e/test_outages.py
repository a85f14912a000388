"""PostgreSQL or S3 out of reach for a few seconds in the middle of a job: tasks retry, the job
succeeds, every chunk is billed once and the audio is complete.

The servers are real and stay up; the workers reach them through a relay
(``tests/support/relay.py``) that is cut and restored, as a network partition would do."""

from __future__ import annotations

import io
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from sqlalchemy import text

from scheduler.queue import TASK_PLAN, Dispatcher, make_celery
from store.db import jobs as job_repo
from store.db.session import make_engine, make_sessionmaker, session_scope
from tests.fixtures.stack import Stack
from tests.support.books import excerpt, s3_store, submit
from tests.support.relay import Relay

pytestmark = [pytest.mark.integration, pytest.mark.slow]
OUTAGE_S = 5.0


def _swap_host(url: str, port: int) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc.replace(f"{parts.hostname}:{parts.port}", f"127.0.0.1:{port}")
    return parts._replace(netloc=netloc).geturl()


@pytest.fixture(params=["database", "s3"])
def outage(request: pytest.FixtureRequest, stack_env: dict[str, str], spare_redis_url: str,
           tmp_path: Path) -> Iterator[tuple[str, Stack, Relay]]:
    env = dict(stack_env)
    key = "LECTOR_DATABASE_URL" if request.param == "database" else "LECTOR_S3_ENDPOINT_URL"
    parts = urlsplit(env[key])
    relay = Relay(parts.hostname or "127.0.0.1", parts.port or 80)
    env[key] = _swap_host(env[key], relay.port)
    env["LECTOR_REDIS_URL"] = spare_redis_url
    stack = Stack(env=env, logs=tmp_path)
    yield request.param, stack, relay
    stack.stop_all()
    relay.close()


def test_a_short_outage_mid_job_is_survived(outage: tuple[str, Stack, Relay], stack_env: dict[str, str]) -> None:
    which, stack, relay = outage
    engine = make_engine(stack_env["LECTOR_DATABASE_URL"])
    sessions = make_sessionmaker(engine)
    objects = s3_store(stack_env)
    job_id = submit(sessions, objects, excerpt(2400, "Mr. Bennet was among the earliest"), fmt="wav", account="outage")

    def current():  # type: ignore[no-untyped-def]
        with session_scope(sessions) as session:
            row = job_repo.get_job(session=session, job_id=job_id, account_id=None)
            session.expunge(row)
            return row

    stack.start_worker("worker")
    Dispatcher(make_celery(stack.env["LECTOR_REDIS_URL"])).send(TASK_PLAN, str(job_id))
    deadline = time.monotonic() + 180
    while not (0 < (row := current()).chunks_done < row.chunks_total):
        assert row.status not in ("succeeded", "failed"), f"finished before the {which} outage"
        assert time.monotonic() < deadline, stack.log_text("worker")[-3000:]
        time.sleep(0.1)
    relay.cut()
    # The outage lasts at least OUTAGE_S and until the worker has run into it (an engine call can
    # be longer than OUTAGE_S on a slow CPU, and the worker touches the store only between calls).
    cut_at = time.monotonic()
    while time.monotonic() - cut_at < OUTAGE_S or " retry: " not in stack.log_text("worker"):
        assert time.monotonic() - cut_at < 60, "the worker never ran into the outage"
        time.sleep(0.2)
    during = current()  # (the test reads PostgreSQL directly, not through the relay)
    relay.restore()
    assert during.status != "failed", during.error

    deadline = time.monotonic() + 240
    while (row := current()).status not in ("succeeded", "failed"):
        assert time.monotonic() < deadline, stack.log_text("worker")[-3000:]
        time.sleep(0.5)
    log = stack.log_text("worker")
    assert row.status == "succeeded", (row.error, log[-3000:])
    noticed = [line for line in log.splitlines() if " retry: " in line]
    assert noticed, "no task retried: the outage was never noticed"

    with engine.connect() as conn:
        billed = conn.execute(text("SELECT chunk_index, characters FROM usage WHERE job_id = :j ORDER BY chunk_index"),
                              {"j": job_id}).all()
        chunks = conn.execute(text('SELECT "index", characters, duration_s FROM job_chunks WHERE job_id = :j '
                                   'ORDER BY "index"'), {"j": job_id}).all()
    engine.dispose()
    assert [tuple(r) for r in billed] == [(r[0], r[1]) for r in chunks]  # every chunk billed exactly once
    with wave.open(io.BytesIO(objects.get_bytes(row.result_key))) as reader:
        seconds = reader.getnframes() / reader.getframerate()
    assert sum(r[2] for r in chunks) <= seconds
    objects.delete(row.result_key)
