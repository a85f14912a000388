"""``lector run`` as a newcomer uses it: nothing configured but the data folder, the local
PostgreSQL and Redis found on their standard ports, a dev key printed, curl-able, and every
child process gone after SIGTERM (what CI timeouts, systemd and docker stop send)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.support.servers import api_up, free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]
BIN = Path(sys.executable).parent


def test_run_serves_heals_a_killed_worker_and_stops_everything(tmp_path: Path, empty_pg_database, own_redis_url: str) -> None:  # type: ignore[no-untyped-def]
    """One ``lector run`` tree, as a newcomer starts it (a tree costs some 30 CPU seconds to bring
    up, so the three checks share it):

    - it serves: curl-able with the dev key it printed, with an API, a synth and a cpu worker;
    - SIGKILL to its synth worker mid-job: the supervisor restarts it (and says so), the API
      answers throughout, and the job finishes within seconds of the restart (the broker would
      hand the lost task back only after the 30-minute visibility timeout, the reaper after 5
      minutes), every chunk billed exactly once;
    - SIGTERM to the supervisor alone stops every child."""
    import redis as redis_lib
    from sqlalchemy import text as sql

    from store.db.session import make_engine

    pg_url = empty_pg_database()  # migrated by lector run itself
    own_redis = own_redis_url  # the module's own database: the session's stack workers never see its tasks
    redis_lib.Redis.from_url(own_redis).flushdb()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LECTOR_")}
    env.update({"LECTOR_PORT": str(port), "LECTOR_DATA_DIR": str(tmp_path / "data"), "LECTOR_DATABASE_URL": pg_url,
                "LECTOR_REDIS_URL": own_redis, "LECTOR_TORCH_THREADS": "1", "LECTOR_JOB_BATCH_CHARS": "300",
                "LECTOR_SYNTH_GROUP_CHARS": "300", "LECTOR_RESTART_BACKOFF_S": "0.5"})
    log_path = tmp_path / "run.log"
    proc = subprocess.Popen([str(BIN / "lector"), "run"], env=env, stdout=log_path.open("wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    children: list[psutil.Process] = []
    stopped = False
    try:
        assert api_up(base, proc, timeout=120), "lector run did not come up:\n" + log_path.read_text()[-3000:]
        auth = {"Authorization": "Bearer " + (tmp_path / "data" / "dev-api-key").read_text().strip()}
        response = httpx.post(f"{base}/v1/service-tts", headers=auth, json={"text": "Hello.", "speaker": "joe"}, timeout=60)
        assert response.status_code == 200 and len(response.content) > 10_000
        assert len(psutil.Process(proc.pid).children(recursive=True)) >= 3  # API, synth worker, cpu worker

        book = " ".join(f"This is sentence number {i} of a short test book." for i in range(60))
        job = httpx.post(f"{base}/v1/jobs", headers=auth, json={"text": book, "speaker": "joe", "format": "wav"}).json()
        deadline = time.monotonic() + 180
        while not 0 < (view := httpx.get(f"{base}/v1/jobs/{job['id']}", headers=auth).json())["progress"]["chunksDone"]:
            assert time.monotonic() < deadline and view["status"] != "failed", view
            time.sleep(0.2)
        assert view["progress"]["chunksDone"] < view["progress"]["chunksTotal"], "finished before the kill"
        synth = next(p for p in psutil.Process(proc.pid).children() if "synth" in " ".join(p.cmdline()))
        os.killpg(synth.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        answers = []
        while (view := httpx.get(f"{base}/v1/jobs/{job['id']}", headers=auth).json())["status"] not in ("succeeded", "failed"):
            answers.append(httpx.get(f"{base}/data/voices/all-v2.json", timeout=5).status_code)
            assert time.monotonic() - killed_at < 150, log_path.read_text()[-3000:]
            time.sleep(0.3)
        assert view["status"] == "succeeded", view
        assert answers and set(answers) == {200}
        output = log_path.read_text()
        assert "worker-synth exited with -9; restarting in 0.5 s" in output
        assert "resumed 1 unfinished job(s) after a worker restart" in output
        engine = make_engine(pg_url)
        with engine.connect() as conn:
            billed = conn.execute(sql("SELECT chunk_index, characters FROM usage WHERE job_id = :j ORDER BY chunk_index"),
                                  {"j": job["id"]}).all()
            chunks = conn.execute(sql('SELECT "index", characters FROM job_chunks WHERE job_id = :j ORDER BY "index"'),
                                  {"j": job["id"]}).all()
        engine.dispose()
        assert [tuple(r) for r in billed] == [tuple(r) for r in chunks]  # every chunk billed exactly once

        children = psutil.Process(proc.pid).children(recursive=True)  # the restarted worker's tree included
        proc.send_signal(signal.SIGTERM)  # to the supervisor alone: it stops what it started
        proc.wait(timeout=60)
        stopped = True
    finally:
        if not stopped:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
        redis_lib.Redis.from_url(own_redis).flushdb()
    assert "dev API key: lk_" in log_path.read_text()
    time.sleep(1)
    alive = [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    assert not alive, alive
