"""workers/tasks.py in a real Celery worker (a thread of this process) on real Redis, PostgreSQL
and a local object store, registered the way ``lector.worker`` registers them. A tone engine
stands in for the voice (what is tested is the tasks' plumbing, not speech): a submitted job runs
plan -> synthesize -> assemble through the broker to ``succeeded``, and a task that fails with a
non-transient error fails its job."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery.contrib.testing.worker import start_worker
from sqlalchemy.orm import Session, sessionmaker

from lector.settings import Settings
from lector.worker import task_config
from scheduler import lifecycle
from scheduler.intake import JobSpec
from scheduler.queue import QUEUE_CPU, QUEUE_SYNTH, Dispatcher, make_celery
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from store.db import create_account, get_job
from store.db.session import make_engine, make_sessionmaker, scoped_sessions
from store.objects.local import LocalObjectStore
from tests.support.fake_engine import ToneEngine
from workers import tasks
from workers.resources import Resources

pytestmark = [pytest.mark.integration]
BOOK = "The rain fell on the roof of the old house. Nobody inside heard it at all. " * 30


@pytest.fixture
def running(pg_url: str, own_redis_url: str, tmp_path: Path) -> Iterator[Resources]:
    app = make_celery(own_redis_url)
    engine = make_engine(pg_url)
    factory: sessionmaker[Session] = make_sessionmaker(engine)
    tone = ToneEngine(fail_on="Unsayable")
    resources = Resources(
        config=task_config(Settings(job_batch_chars=200, account_batch_window=1, assembly_workers=1)),
        sessions=scoped_sessions(factory), objects=LocalObjectStore(tmp_path), catalog=Catalog.load(),
        synthesizer=Synthesizer(lambda voice: tone), dispatcher=Dispatcher(app),
    )
    tasks.register(app, lambda: resources)
    # No ping check: it needs a result backend, and lector's tasks keep no results.
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30, queues=[QUEUE_CPU, QUEUE_SYNTH]):
        yield resources
    engine.dispose()


def _submit(res: Resources, text: str) -> uuid.UUID:
    with res.sessions() as session:
        account = create_account(session=session, name=f"tasks-{uuid.uuid4().hex[:8]}")
        job, _, messages = lifecycle.submit(
            session=session, objects=res.objects, account_id=account.id,
            spec=JobSpec(text=text, speaker="joe", model_id="mistv3", lang="en"),
            idempotency_key=None, allow_private_webhooks=False,
        )
    res.dispatcher.send_all(messages)
    return job.id


def _wait(res: Resources, job_id: uuid.UUID, timeout_s: float = 90.0) -> tuple[str, str | None, int, int]:
    deadline = time.monotonic() + timeout_s
    while True:
        with res.sessions() as session:
            job = get_job(session=session, job_id=job_id, account_id=None)
            state = (job.status, job.error, job.chunks_done, job.chunks_total)
        if job.is_terminal or time.monotonic() > deadline:
            return state
        time.sleep(0.2)


def test_a_job_runs_through_the_broker_to_succeeded(running: Resources) -> None:
    status, error, done, total = _wait(running, _submit(running, BOOK))
    assert (status, error) == ("succeeded", None)
    assert done == total > 1  # several batches of 200 characters, handed on one at a time


def test_a_task_that_fails_for_good_fails_the_job(running: Resources) -> None:
    status, error, *_ = _wait(running, _submit(running, "Unsayable words. " * 3))
    assert status == "failed" and error == "internal error"  # JOB_ERRORS: a RuntimeError is ours, and its text stays in the log
