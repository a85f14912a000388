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


def test_run_serves_and_stops_everything(tmp_path: Path, empty_pg_database, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    pg_url = empty_pg_database()  # migrated by lector run itself
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LECTOR_")}
    env.update({"LECTOR_PORT": str(port), "LECTOR_DATA_DIR": str(tmp_path / "data"),
                "LECTOR_DATABASE_URL": pg_url, "LECTOR_REDIS_URL": redis_url, "LECTOR_TORCH_THREADS": "1"})
    proc = subprocess.Popen([str(BIN / "lector"), "run"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert api_up(f"http://127.0.0.1:{port}", proc, timeout=120), "lector run did not come up"
        key = (tmp_path / "data" / "dev-api-key").read_text().strip()
        response = httpx.post(f"http://127.0.0.1:{port}/v1/service-tts", headers={"Authorization": f"Bearer {key}"},
                              json={"text": "Hello.", "speaker": "joe"}, timeout=60)
        assert response.status_code == 200 and len(response.content) > 10_000
        children = psutil.Process(proc.pid).children(recursive=True)
        assert len(children) >= 3  # API, synth worker, cpu worker
    finally:
        proc.send_signal(signal.SIGTERM)
        output = proc.communicate(timeout=60)[0].decode(errors="replace")
    assert "dev API key: lk_" in output
    time.sleep(1)
    alive = [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    assert not alive, alive
