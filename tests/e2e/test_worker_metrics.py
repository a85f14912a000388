"""``lector worker --metrics-port``: a Celery worker serves ``/metrics``, and its counters move
when it runs tasks: task counts (the reaper, sent to a queue only this worker reads), and the
characters a book job's chunks billed (a job on a Redis database only this worker reads)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select

from scheduler.queue import TASK_PLAN, TASK_REAP, Dispatcher, make_celery
from store.db import Usage
from store.db.session import make_engine, make_sessionmaker, session_scope
from tests.fixtures.stack import BIN, ROOT, free_port
from tests.support.books import excerpt, job_row, s3_store, submit

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _value(url: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(httpx.get(url, timeout=5).text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    return 0.0


@contextmanager
def metrics_worker(env: dict[str, str], queues: str, logs: Path) -> Iterator[str]:
    """``lector worker --metrics-port`` on ``queues``; yields its metrics URL once it answers."""
    port = free_port()
    log = open(logs / "worker.log", "ab")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [str(BIN / "lector"), "worker", "--queues", queues, "--name", "metricsworker", "--quiet",
         "--metrics-port", str(port)],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, (logs / "worker.log").read_text()
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def test_worker_metrics_count_tasks(stack_env: dict[str, str], tmp_path) -> None:  # type: ignore[no-untyped-def]
    with metrics_worker(stack_env, "metrics-test", tmp_path) as url:
        before = _value(url, "lector_tasks_total", task=TASK_REAP, state="SUCCESS")
        make_celery(stack_env["LECTOR_REDIS_URL"]).send_task(TASK_REAP, queue="metrics-test")
        deadline = time.monotonic() + 60
        while _value(url, "lector_tasks_total", task=TASK_REAP, state="SUCCESS") < before + 1:
            assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()[-3000:]
            time.sleep(0.3)
        assert _value(url, "lector_task_seconds_count", task=TASK_REAP) >= 1


def test_worker_metrics_count_what_a_job_billed(  # type: ignore[no-untyped-def]
    stack_env: dict[str, str], own_redis_url: str, pg_url: str, tmp_path
) -> None:
    env = {**stack_env, "LECTOR_REDIS_URL": own_redis_url}  # no other worker takes this job's tasks
    engine = make_engine(pg_url)
    sessions = make_sessionmaker(engine)
    try:
        job_id = submit(sessions, s3_store(env), excerpt(700), fmt="mp3", account="metrics")
        with metrics_worker(env, "synth,cpu", tmp_path) as url:
            Dispatcher(make_celery(own_redis_url)).send(TASK_PLAN, str(job_id))
            deadline = time.monotonic() + 240
            while job_row(sessions, job_id).status not in ("succeeded", "failed"):
                assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()[-3000:]
                time.sleep(0.5)
            assert job_row(sessions, job_id).status == "succeeded"
            counted = _value(url, "lector_characters_billed_total", model="mistv3", transport="job")
        with session_scope(sessions) as session:
            billed = session.execute(select(func.sum(Usage.characters)).where(Usage.job_id == job_id)).scalar_one()
    finally:
        engine.dispose()
    assert billed > 600 and counted == billed  # this worker synthesized every chunk: it counted all they billed
