"""The CLI against a lector started the way ``make run`` starts one (``lector run``, on a
database of its own that starts empty, as on a fresh clone), from a shell that knows nothing of
it: no ``LECTOR_PORT``, no ``LECTOR_DATABASE_URL``, no key. The CLI finds the API, the database
and the dev key through ``.lector/``; short job ids work; ``--wait`` says how to download; usage
defaults to this month; the README's commands (and docs/audiobooks.md's) run as written; a stopped service is one line,
not a traceback."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import uuid
import wave
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import av
import httpx
import pytest
from sqlalchemy import text

from speech.billing import billed_characters
from store.db.session import make_engine
from tests.fixtures.postgres import create_database, drop_database
from tests.fixtures.stack import BIN, ROOT, free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("make-run")


@pytest.fixture(scope="module")
def run_db() -> Iterator[str]:
    """An empty database, as a fresh clone's ``make run`` finds: it migrates it and makes the dev key."""
    name, url = create_database("lector_run")
    try:
        yield url
    finally:
        drop_database(name)


@pytest.fixture(scope="module")
def lector_run(run_db: str, own_redis_url: str, data_dir: Path) -> Iterator[subprocess.Popen[bytes]]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LECTOR_")}
    env.update({"LECTOR_ENV": "dev", "LECTOR_PORT": str(port), "LECTOR_DATABASE_URL": run_db,
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


def _shell_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("LECTOR_")}


def cli(data_dir: Path, *args: str, key: str | None = None) -> subprocess.CompletedProcess[str]:
    """``lector ...`` from a shell that has only the data folder (as a user in the same checkout);
    the key is the dev key ``make run`` saved there unless one is given."""
    env = _shell_env()
    env["LECTOR_DATA_DIR"] = str(data_dir)
    if key:
        env["LECTOR_API_KEY"] = key
    return subprocess.run([str(BIN / "lector"), *args], env=env, capture_output=True, text=True, timeout=300,
                          cwd=data_dir)


def test_the_cli_finds_what_make_run_started(lector_run, data_dir: Path, run_db: str) -> None:  # type: ignore[no-untyped-def]
    record = json.loads((data_dir / "run.json").read_text())
    assert record["pid"] == lector_run.pid and record["database_url"] == run_db
    output = (data_dir / "run.log").read_text()
    api_lines = [line for line in output.splitlines() if line.split()[:1] == ["api"]]
    assert len(api_lines) == 1 and record["api_url"] in api_lines[0]  # one line per service: where it listens
    assert any(line.split()[:1] == ["worker-cpu"] and "cpu" in line for line in output.splitlines())
    assert "superuser privileges" not in output  # a development setup: no root warning
    assert "-------------- " not in output  # no Celery banners

    book = data_dir / "tiny.txt"
    book.write_text("A tiny book.\n\nIt has two paragraphs.\n")
    submitted = cli(data_dir, "jobs", "submit", str(book), "--format", "mp3", "--wait")
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip().splitlines()[-1]
    assert uuid.UUID(job_id)
    assert f"lector jobs download {job_id[:8]} tiny.mp3" in submitted.stderr

    listed = cli(data_dir, "jobs", "list")
    assert listed.returncode == 0 and job_id in listed.stdout  # whole ids
    downloaded = cli(data_dir, "jobs", "download", job_id[:8], "tiny.mp3")
    assert downloaded.returncode == 0, downloaded.stderr
    assert (data_dir / "tiny.mp3").stat().st_size > 1000
    shown = json.loads(cli(data_dir, "jobs", "get", job_id[:6]).stdout)
    assert shown["id"] == job_id
    # billed by one rule (speech.billing): the blank line between the paragraphs is one character
    assert shown["characters"] == shown["billedCharacters"] == len("A tiny book. It has two paragraphs.")
    assert f"done: {shown['billedCharacters']} characters billed" in submitted.stderr

    name = f"via-runfile-{uuid.uuid4().hex[:8]}"
    created = cli(data_dir, "accounts", "create", name)
    assert created.returncode == 0, created.stderr
    engine = make_engine(run_db, pool=False)
    try:
        with engine.connect() as conn:  # the account landed in make run's database, not a default one
            assert conn.execute(text("SELECT count(*) FROM accounts WHERE name = :n"), {"n": name}).scalar_one() == 1
    finally:
        engine.dispose()

    usage = cli(data_dir, "admin", "usage", "--format", "json")
    assert usage.returncode == 0, usage.stderr
    now = datetime.now(UTC)
    assert json.loads(usage.stdout)["from"].startswith(f"{now:%Y-%m}-01T00:00:00")


def usage_total(data_dir: Path) -> int:
    """Characters billed this month, as ``lector admin usage`` reports them."""
    report = cli(data_dir, "admin", "usage", "--format", "json")
    assert report.returncode == 0, report.stderr
    return int(json.loads(report.stdout)["total"]["characters"])


def _doc_block(language: str, starting: str, page: str = "README.md") -> str:
    """The fenced ``language`` block of ``page`` (the README, or a page of docs/) whose first line
    starts with ``starting``."""
    blocks = re.findall(rf"^```{language}\n(.*?)^```", (ROOT / page).read_text(), re.MULTILINE | re.DOTALL)
    (block,) = [b for b in blocks if b.startswith(starting)]
    return str(block)


@pytest.fixture(scope="module")
def clone(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder laid out as a clone after ``make run``: ``.lector`` (what it started), ``.venv``
    and ``samples`` (what the repository ships)."""
    folder = tmp_path_factory.mktemp("clone")
    (folder / ".lector").symlink_to(data_dir)
    (folder / ".venv").symlink_to(BIN.parent)
    (folder / "samples").symlink_to(ROOT / "samples")
    return folder


def test_the_readme_commands_work_as_written(lector_run, data_dir: Path, clone: Path) -> None:  # type: ignore[no-untyped-def]
    """The README's first steps, run in a shell in the clone as they are printed; only the port
    differs (``make run`` here listens where the test put it, not on 8000)."""
    api_url = json.loads((data_dir / "run.json").read_text())["api_url"]
    block = _doc_block("sh", "KEY=$(cat .lector/dev-api-key)").replace("http://127.0.0.1:8000", api_url)
    # Up to the book job, then the rest with the id it printed in place of <id>.
    first, rest = block.split("--wait\n", 1)
    before = usage_total(data_dir)  # what the tests above billed to the dev account

    def shell(script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=clone, env=_shell_env(),
                              capture_output=True, text=True, timeout=900)

    submitted = shell(first + "--wait\n")
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    with wave.open(str(clone / "hello.wav")) as hello:  # the curl example: two sentences of speech
        assert hello.getnframes() / hello.getframerate() > 2
    job_id = submitted.stdout.strip().splitlines()[-1]
    assert uuid.UUID(job_id) and f"lector jobs download {job_id[:8]} " in submitted.stderr
    finished = shell(rest.replace("<id>", job_id))
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert job_id in finished.stdout  # jobs list
    with av.open(str(clone / "book.m4b")) as book:  # the title and two chapters, as chapter marks
        assert book.duration / 1_000_000 > 400
        titles = [c["metadata"]["title"] for c in book.chapters()]
    assert titles == ["Pride and Prejudice", "Chapter 1", "Chapter 2"]
    # admin usage: this month's table, the dev account billed for exactly the README's requests
    job = json.loads(cli(data_dir, "jobs", "get", job_id).stdout)
    said = re.search(r'"text": "([^"]+)"', block)
    assert said is not None
    total = usage_total(data_dir)
    assert total - before == billed_characters(said.group(1)) + job["billedCharacters"]
    assert any(line.split()[:1] == ["total"] and f"{total:,}" in line.split() for line in finished.stdout.splitlines())

    example = _doc_block("python", "from openai import OpenAI").replace("http://127.0.0.1:8000", api_url)
    spoken = subprocess.run([str(BIN / "python"), "-c", example], cwd=clone, env=_shell_env(), capture_output=True,
                            text=True, timeout=300)
    assert spoken.returncode == 0, spoken.stderr[-3000:]
    with av.open(str(clone / "hello.mp3")) as mp3:
        assert mp3.format.name == "mp3" and mp3.duration > 0


def test_the_readme_producer_commands_work_as_written(lector_run, data_dir: Path, clone: Path) -> None:  # type: ignore[no-untyped-def]
    """The README's producer commands (and docs/audiobooks.md's, the same): the lexicon, the SSML
    request and the cast job, run as printed (the port aside). The cast job is only submitted
    here; it is canceled after."""
    api_url = json.loads((data_dir / "run.json").read_text())["api_url"]
    printed = _doc_block("sh", "# 1. a pronunciation lexicon")
    assert printed == _doc_block("sh", "# 1. a pronunciation lexicon", "docs/audiobooks.md")  # one text, two pages
    block = printed.replace("http://127.0.0.1:8000", api_url)
    script = "KEY=$(cat .lector/dev-api-key)\n" + block
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=clone, env=_shell_env(),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    stored, phonemized, job = answers[0], answers[1], answers[-1]
    assert stored["name"] == "names" and stored["version"] >= 1, stored
    assert phonemized["changes"], phonemized  # the lexicon changed what is said
    changed = {c["word"]: c for c in phonemized["changes"]}
    assert changed["Nguyen"]["phonemes"] == "wɪn" and changed["NYC"]["alias"] == "New York City", phonemized
    with av.open(str(clone / "ssml.mp3")) as spoken:  # the SSML request: speech, with its 700 ms break
        assert spoken.duration / 1_000_000 > 3
    assert job["status"] == "queued" and job["cast"]["characters"]["Mrs. Bennet"]["voice"] == "nora", job
    assert job["format"] == "m4b" and job["qa"] == {"status": "pending"}, job
    canceled = cli(data_dir, "jobs", "cancel", job["id"][:8])
    assert canceled.returncode == 0, canceled.stderr


def test_a_stopped_service_is_one_line(lector_run, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    os.killpg(lector_run.pid, signal.SIGTERM)
    lector_run.wait(timeout=60)
    assert not (data_dir / "run.json").exists()  # removed on the way out
    # The API heard the SIGTERM and shut down on its own (a child that inherited a blocked
    # signal mask once sat out the stop until the supervisor's SIGKILL).
    assert "Finished server process" in (data_dir / "run.log").read_text()
    result = cli(data_dir, "jobs", "list")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("cannot reach lector at http://127.0.0.1:8000"), result.stderr
