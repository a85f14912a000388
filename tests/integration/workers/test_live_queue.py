"""The live playlist's segment tasks on a queue of their own, through a real Celery worker (a
thread of this process) on real Redis and PostgreSQL, with the queues ``lector run`` gives its
workers: a new job's plan runs while a backlog of segment tasks waits (they were sent first; on
one queue the plan came after every one of them), and the live worker then takes the backlog.
A tone engine stands in for the voice: no audio is made here, only the tasks' routing is tested."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from celery import Celery
from celery.contrib.testing.worker import start_worker
from sqlalchemy.orm import Session, sessionmaker

from lector.settings import Settings
from lector.supervisor import commands
from lector.worker import task_config
from scheduler import lifecycle
from scheduler.intake import JobSpec
from scheduler.queue import QUEUE_LIVE, TASK_HLS, Dispatcher, make_celery
from scheduler.queue_depth import RedisDepths
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from store.db import create_account, get_job
from store.db.session import make_engine, make_sessionmaker, scoped_sessions
from store.objects.local import LocalObjectStore
from store.status import JobStatus
from tests.support.fake_engine import ToneEngine
from workers import tasks
from workers.resources import Resources

pytestmark = [pytest.mark.integration]
BACKLOG = 40


@pytest.fixture
def app_and_resources(pg_url: str, own_redis_url: str, tmp_path: Path) -> Iterator[tuple[Celery, Resources]]:
    app = make_celery(own_redis_url)
    engine = make_engine(pg_url)
    factory: sessionmaker[Session] = make_sessionmaker(engine)
    tone = ToneEngine()
    resources = Resources(
        config=task_config(Settings(job_batch_chars=200, account_batch_window=1, live_playlist=True)),
        sessions=scoped_sessions(factory), objects=LocalObjectStore(tmp_path), catalog=Catalog.load(),
        synthesizer=Synthesizer(lambda voice: tone), dispatcher=Dispatcher(app),
    )
    tasks.register(app, lambda: resources)
    yield app, resources
    engine.dispose()


def _queues(process: str) -> list[str]:
    """The queues ``lector run`` has ``process`` take (on a machine without a GPU)."""
    argv, _ = commands(Settings(), 0)[process]
    return argv[argv.index("--queues") + 1].split(",")


def _until(condition: Callable[[], bool], what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_plan_runs_while_segment_tasks_wait_and_the_live_worker_takes_them(
    app_and_resources: tuple[Celery, Resources], own_redis_url: str
) -> None:
    app, res = app_and_resources
    with res.sessions() as session:
        account = create_account(session=session, name=f"live-{uuid.uuid4().hex[:8]}")
        job, _, messages = lifecycle.submit(
            session=session, objects=res.objects, account_id=account.id,
            spec=JobSpec(text="The rain fell on the roof of the old house. " * 20, speaker="joe", model_id="mistv3",
                         lang="en"),
            idempotency_key=None, allow_private_webhooks=False,
        )
    for _ in range(BACKLOG):  # what a running book's engine calls leave behind them, sent first
        res.dispatcher.send(TASK_HLS, str(job.id))
    res.dispatcher.send_all(messages)  # the plan
    depths = RedisDepths(own_redis_url)

    def status() -> JobStatus:
        with res.sessions() as session:
            return JobStatus(get_job(session=session, job_id=job.id, account_id=None).status)

    try:
        assert depths.depths([QUEUE_LIVE]) == {QUEUE_LIVE: BACKLOG}
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30,
                          queues=_queues("worker-cpu"), hostname=f"cpu-{uuid.uuid4().hex[:6]}@test"):
            _until(lambda: status() == JobStatus.RUNNING, "the plan did not run")
        assert depths.depths([QUEUE_LIVE]) == {QUEUE_LIVE: BACKLOG}  # not one segment task was in its way

        assert _queues("worker-live") == [QUEUE_LIVE]
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30,
                          queues=_queues("worker-live"), hostname=f"live-{uuid.uuid4().hex[:6]}@test"):
            _until(lambda: depths.depths([QUEUE_LIVE]) == {QUEUE_LIVE: 0}, "the live worker left segment tasks")
    finally:
        depths.close()
