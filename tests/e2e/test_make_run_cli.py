"""The CLI against a lector started the way ``make run`` starts one (``lector run``), from a
shell that knows nothing of it: no ``LECTOR_PORT``, no ``LECTOR_DATABASE_URL``. The CLI finds
the API and the database through ``.lector/run.json``; short job ids work; ``--wait`` says how
to download; usage defaults to this month; a stopped service is one line, not a traceback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from store.db.session import make_engine
from tests.fixtures.stack import BIN, ROOT, free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("make-run")


@pytest.fixture(scope="module")
def lector_run(pg_url: str, own_redis_url: str, data_dir: Path) -> Iterator[subprocess.Popen[bytes]]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LECTOR_")}
    env.update({"LECTOR_ENV": "dev", "LECTOR_PORT": str(port), "LECTOR_DATABASE_URL": pg_url,
                "LECTOR_REDIS_URL": own_redis_url, "LECTOR_DATA_DIR": str(data_dir), "LECTOR_TORCH_THREADS": "1"})
    log = open(data_dir / "run.log", "ab")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen([str(BIN / "lector"), "run"], env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, cwd=ROOT)
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/livez", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGTERM)
            pytest.fail("lector run did not start:\n" + (data_dir / "run.log").read_text()[-4000:])
        time.sleep(0.5)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)


def cli(data_dir: Path, *args: str, key: str | None = None) -> subprocess.CompletedProcess[str]:
    """``lector ...`` from a shell that has only the data folder (as a user in the same checkout)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LECTOR_")}
    env["LECTOR_DATA_DIR"] = str(data_dir)
    if key:
        env["LECTOR_API_KEY"] = key
    return subprocess.run([str(BIN / "lector"), *args], env=env, capture_output=True, text=True, timeout=300,
                          cwd=data_dir)


def test_the_cli_finds_what_make_run_started(lector_run, data_dir: Path, api_key: str, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    record = json.loads((data_dir / "run.json").read_text())
    assert record["pid"] == lector_run.pid and record["database_url"] == pg_url
    output = (data_dir / "run.log").read_text()
    api_lines = [line for line in output.splitlines() if line.split()[:1] == ["api"]]
    assert len(api_lines) == 1 and record["api_url"] in api_lines[0]  # one line per service: where it listens
    assert any(line.split()[:1] == ["worker-cpu"] and "cpu" in line for line in output.splitlines())
    assert "superuser privileges" not in output  # a development setup: no root warning
    assert "-------------- " not in output  # no Celery banners

    book = data_dir / "tiny.txt"
    book.write_text("A tiny book.\n\nIt has two paragraphs.\n")
    submitted = cli(data_dir, "jobs", "submit", str(book), "--format", "mp3", "--wait", key=api_key)
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip().splitlines()[-1]
    assert uuid.UUID(job_id)
    assert f"lector jobs download {job_id[:8]} tiny.mp3" in submitted.stderr

    listed = cli(data_dir, "jobs", "list", key=api_key)
    assert listed.returncode == 0 and job_id in listed.stdout  # whole ids
    downloaded = cli(data_dir, "jobs", "download", job_id[:8], "tiny.mp3", key=api_key)
    assert downloaded.returncode == 0, downloaded.stderr
    assert (data_dir / "tiny.mp3").stat().st_size > 1000
    shown = json.loads(cli(data_dir, "jobs", "get", job_id[:6], key=api_key).stdout)
    assert shown["id"] == job_id
    # billed by one rule (speech.billing): the blank line between the paragraphs is one character
    assert shown["characters"] == shown["billedCharacters"] == len("A tiny book. It has two paragraphs.")
    assert f"done: {shown['billedCharacters']} characters billed" in submitted.stderr

    name = f"via-runfile-{uuid.uuid4().hex[:8]}"
    created = cli(data_dir, "accounts", "create", name)
    assert created.returncode == 0, created.stderr
    engine = make_engine(pg_url, pool=False)
    try:
        with engine.connect() as conn:  # the account landed in make run's database, not a default one
            assert conn.execute(text("SELECT count(*) FROM accounts WHERE name = :n"), {"n": name}).scalar_one() == 1
    finally:
        engine.dispose()

    usage = cli(data_dir, "admin", "usage", "--format", "json")
    assert usage.returncode == 0, usage.stderr
    now = datetime.now(UTC)
    assert json.loads(usage.stdout)["from"].startswith(f"{now:%Y-%m}-01T00:00:00")


def test_a_stopped_service_is_one_line(lector_run, data_dir: Path, api_key: str) -> None:  # type: ignore[no-untyped-def]
    os.killpg(lector_run.pid, signal.SIGTERM)
    lector_run.wait(timeout=60)
    assert not (data_dir / "run.json").exists()  # removed on the way out
    result = cli(data_dir, "jobs", "list", key=api_key)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("cannot reach lector at http://127.0.0.1:8000"), result.stderr
