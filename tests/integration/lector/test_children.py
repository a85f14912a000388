"""``lector.children.Supervisor`` with real processes: a crashing child is restarted with a
doubling backoff while a real HTTP server beside it keeps answering, a crash loop stops
everything, and two stop signals to the supervisor's process group leave no child behind.

The supervisor runs in its own process (and process group), as ``lector run`` does under
``make``; its children are small Python programs."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.fixtures.stack import free_port
from tests.support.servers import wait_until

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]

SUPERVISE = """
import json, logging, sys
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
from lector.children import supervise
children, options = json.loads(sys.argv[1])
sys.exit(supervise({k: (v, {}) for k, v in children.items()}, **options))
"""

# Stops slowly on SIGTERM, so that a second signal lands while the supervisor is stopping.
SLOW_TO_STOP = """
import signal, sys, time
def bye(*_):
    print("stopping on SIGTERM", flush=True)
    time.sleep(1.5)
    sys.exit(0)
signal.signal(signal.SIGTERM, bye)
print("ready", flush=True)
while True:
    time.sleep(0.1)
"""


def _start(children: dict[str, list[str]], log: Path, **options: float) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", SUPERVISE, json.dumps([children, options])], cwd=ROOT, env=env,
        stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True,
    )


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    return [p for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def test_a_crashed_child_is_restarted_with_backoff_while_the_api_answers(tmp_path: Path) -> None:
    port = free_port()
    crash = "import time, sys; time.sleep(0.2); sys.exit(3)"
    children = {"api": [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", str(tmp_path)],
                "worker-synth": [sys.executable, "-c", crash]}
    log = tmp_path / "supervisor.log"
    proc = _start(children, log, max_restarts_per_minute=4, backoff_s=0.3, max_backoff_s=5)
    try:
        assert wait_until(lambda: httpx.get(f"http://127.0.0.1:{port}/", timeout=1).status_code == 200, timeout=20)
        api_pid = next(p.pid for p in _descendants(proc.pid) if "http.server" in " ".join(p.cmdline()))
        answers = []
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                answers.append(httpx.get(f"http://127.0.0.1:{port}/", timeout=2).status_code)
            except httpx.HTTPError:
                if "crash-looping" in log.read_text():
                    break  # the API went down with everything else, at the end: not a miss
                raise
            time.sleep(0.1)
        assert proc.wait(timeout=30) == 1  # the crash loop stopped everything, after four restarts
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    text = log.read_text()
    delays = [float(d) for d in re.findall(r"worker-synth exited with 3; restarting in ([\d.]+) s", text)]
    assert delays == [0.3, 0.6, 1.2, 2.4], text
    assert "crash-looping: stopping" in text
    assert len(re.findall(r"started worker-synth", text)) == 5
    assert len(re.findall(r"started api", text)) == 1  # never restarted: it answered throughout
    assert answers and set(answers) == {200}, answers
    assert not psutil.pid_exists(api_pid) or psutil.Process(api_pid).status() == psutil.STATUS_ZOMBIE


def test_two_stop_signals_to_the_group_leave_no_child_behind(tmp_path: Path) -> None:
    children = {name: [sys.executable, "-c", SLOW_TO_STOP] for name in ("api", "worker-synth", "worker-cpu")}
    log = tmp_path / "supervisor.log"
    for first, second in ((signal.SIGTERM, signal.SIGINT), (signal.SIGINT, signal.SIGTERM)):
        proc = _start(children, log)
        try:
            assert wait_until(lambda: len(_descendants(proc.pid)) == 3, timeout=20)  # noqa: B023
            # each child has its handler: a SIGTERM before it would end one by default (seen: the
            # signal reached worker-cpu in the millisecond it was started)
            assert wait_until(lambda: log.read_text().count("ready") == 3, timeout=20)  # noqa: B023
            kids = _descendants(proc.pid)
            os.killpg(proc.pid, first)  # what make and a terminal do: the whole foreground group
            time.sleep(0.3)  # the children are now stopping (1.5 s each)
            os.killpg(proc.pid, second)
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        time.sleep(0.2)
        assert not _alive(kids), (first, second, _alive(kids), log.read_text())
        text = log.read_text()
        assert "received while stopping; the stop goes on" in text
        # Each child heard the SIGTERM and stopped on its own: none was left to the SIGKILL.
        assert text.count("stopping on SIGTERM") == 3, text
        assert "did not stop" not in text, text


def test_a_worker_restart_resends_unfinished_jobs_at_once(pg_url: str, own_redis_url: str) -> None:
    """``lector run`` calls ``resume_jobs`` after restarting a worker: a running job's next step
    is on the real Redis queue at once, not after the reaper's five minutes. The queue is a Redis
    database of the test's own: on the session's, the shared stack's workers took the message
    before the test could read it."""
    import redis as redis_lib

    from lector.supervisor import resume_jobs
    from store.db import create_account, create_job, make_engine, make_sessionmaker, session_scope

    engine = make_engine(pg_url)
    try:
        with session_scope(make_sessionmaker(engine)) as session:
            account = create_account(session=session, name=f"resume-{os.getpid()}-{time.monotonic_ns()}")
            job, _ = create_job(session=session, account_id=account.id, request_hash=f"h{time.monotonic_ns()}",
                                params={"speaker": "joe"}, characters=10)
            job.status = "running"  # updated just now: the reaper would wait five minutes
            job_id = str(job.id)
    finally:
        engine.dispose()
    client = redis_lib.Redis.from_url(own_redis_url)
    assert resume_jobs(pg_url, own_redis_url, 60) >= 1
    queued = [json.loads(m) for m in client.lrange("cpu", 0, -1)]
    assert any(job_id in m["headers"]["argsrepr"] and m["headers"]["task"] == "lector.plan" for m in queued), queued
