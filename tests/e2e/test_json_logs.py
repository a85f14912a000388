"""``LECTOR_LOG_FORMAT=json``: the API and a Celery worker (real processes, real PostgreSQL, Redis
and Swift) write one JSON object per line, carrying the request, account, job and task ids, and
never the API key."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.fixtures.stack import BIN, ROOT, Stack, free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def json_stack(
    stack_env: dict[str, str], own_redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    # its own Redis database: the shared stack's workers must not take this API's tasks
    env = {**stack_env, "LECTOR_LOG_FORMAT": "json", "LECTOR_REDIS_URL": own_redis_url}
    result = Stack(env=env, logs=tmp_path_factory.mktemp("json-logs"))
    port = free_port()
    log = open(result.logs / "api.log", "ab")  # noqa: SIM115 - closed with the process
    result.processes["api"] = subprocess.Popen(
        [str(BIN / "lector"), "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT,
    )
    result.api_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(f"{result.api_url}/data/voices/all-v2.json", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if result.processes["api"].poll() is not None or time.monotonic() > deadline:
            result.stop_all()
            pytest.fail("the API did not start:\n" + result.log_text("api")[-4000:])
        time.sleep(0.3)
    result.start_worker("jsonworker")
    try:
        yield result
    finally:
        result.stop_all()


def records(text: str) -> list[dict[str, Any]]:
    lines = [line for line in text.splitlines() if line.strip()]
    plain = [line for line in lines if not line.startswith("{")]
    assert not plain, f"lines that are not JSON: {plain[:5]}"
    return [json.loads(line) for line in lines]


def test_api_and_worker_logs_are_json_with_ids(json_stack: Stack, api_key: str, pg_url: str) -> None:
    headers = {"Authorization": f"Bearer {api_key}"}
    spoken = httpx.post(f"{json_stack.api_url}/v1/service-tts", json={"text": "Logged.", "speaker": "joe"},
                        headers={**headers, "Accept": "audio/wav"}, timeout=60)
    assert spoken.status_code == 200
    request_id = spoken.headers["x-request-id"]
    submitted = httpx.post(f"{json_stack.api_url}/v1/jobs", headers=headers, data={"speaker": "joe", "format": "mp3"},
                           files={"file": ("t.txt", b"A logged job. It ends here.", "text/plain")}, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job_id = submitted.json()["id"]
    deadline = time.monotonic() + 240
    while httpx.get(f"{json_stack.api_url}/v1/jobs/{job_id}", headers=headers, timeout=30).json()["status"] != "succeeded":
        assert time.monotonic() < deadline, "the job did not finish"
        time.sleep(0.5)

    api = records(json_stack.log_text("api"))
    access = [r for r in api if r.get("logger") == "lector.access" and r.get("request_id") == request_id]
    assert len(access) == 1
    line = access[0]
    assert line["path"] == "/v1/service-tts" and line["status"] == 200 and line["level"] == "INFO"
    assert line["account_id"]  # bound at authentication
    assert {"time", "message"} <= line.keys()
    job_lines = [r for r in api if r.get("path") == f"/v1/jobs/{job_id}"]
    assert job_lines and all(r["job_id"] == job_id and r["account_id"] == line["account_id"] for r in job_lines)

    worker = records(json_stack.log_text("jsonworker"))
    in_tasks = [r for r in worker if r.get("job_id") == job_id]
    assert in_tasks, "no worker line carries the job id"
    assert all(r.get("task_id") for r in in_tasks)
    assert len({r["task_id"] for r in in_tasks}) >= 2  # plan, synthesize, assemble... each its own task
    everything = json_stack.log_text("api") + json_stack.log_text("jsonworker")
    assert api_key not in everything
