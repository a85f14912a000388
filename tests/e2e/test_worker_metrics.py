"""``lector worker --metrics-port``: a Celery worker serves ``/metrics``, and its task counters
move when it runs a task (the reaper, sent to a queue only this worker reads)."""

from __future__ import annotations

import subprocess
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from scheduler.queue import TASK_REAP, make_celery
from tests.fixtures.stack import BIN, ROOT, free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _value(url: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(httpx.get(url, timeout=5).text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    return 0.0


def test_worker_metrics_count_tasks(stack_env: dict[str, str], tmp_path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    log = open(tmp_path / "worker.log", "ab")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [str(BIN / "lector"), "worker", "--queues", "metrics-test", "--name", "metricsworker", "--quiet",
         "--metrics-port", str(port)],
        env=stack_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT,
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
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "worker.log").read_text()
            time.sleep(0.3)
        before = _value(url, "lector_tasks_total", task=TASK_REAP, state="SUCCESS")
        make_celery(stack_env["LECTOR_REDIS_URL"]).send_task(TASK_REAP, queue="metrics-test")
        deadline = time.monotonic() + 60
        while _value(url, "lector_tasks_total", task=TASK_REAP, state="SUCCESS") < before + 1:
            assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()[-3000:]
            time.sleep(0.3)
        assert _value(url, "lector_task_seconds_count", task=TASK_REAP) >= 1
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
