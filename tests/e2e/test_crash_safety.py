"""Workers die; jobs do not. A synth worker is killed with SIGKILL (its whole process group)
part-way through a job and a fresh one started: the job succeeds, every chunk is billed exactly
once, and the audio is complete. These workers use a Redis database of their own and a short
visibility timeout, so the killed worker's task comes back within seconds."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy import text

from scheduler.queue import TASK_PLAN, Dispatcher, make_celery
from speech.billing import billed_characters
from store.db.session import make_engine, make_sessionmaker
from tests.fixtures.stack import Stack
from tests.support.books import excerpt, job_row, s3_store, submit

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
def crash_stack(stack_env: dict[str, str], spare_redis_url: str, tmp_path: Path) -> Iterator[Stack]:
    url = spare_redis_url
    env = {**stack_env, "LECTOR_REDIS_URL": url, "LECTOR_VISIBILITY_TIMEOUT_S": "8"}
    crash = Stack(env=env, logs=tmp_path)
    yield crash
    crash.stop_all()


def test_killed_synth_worker_loses_nothing_and_bills_once(crash_stack: Stack, pg_url: str) -> None:
    engine = make_engine(pg_url)
    sessions = make_sessionmaker(engine)
    objects = s3_store(crash_stack.env)
    book = excerpt(3600)
    job_id = submit(sessions, objects, book, fmt="wav", account="crash")
    crash_stack.start_worker("victim")
    Dispatcher(make_celery(crash_stack.env["LECTOR_REDIS_URL"])).send(TASK_PLAN, str(job_id))

    deadline = time.monotonic() + 180
    while True:
        current = job_row(sessions, job_id)
        if 0 < current.chunks_done < current.chunks_total:
            break
        assert current.chunks_done < current.chunks_total or current.chunks_total == 0, "finished before the kill"
        assert time.monotonic() < deadline, crash_stack.log_text("victim")[-3000:]
        time.sleep(0.1)
    crash_stack.kill("victim")  # SIGKILL to the whole process group, mid-batch
    done_at_kill = job_row(sessions, job_id).chunks_done

    crash_stack.start_worker("rescuer")
    deadline = time.monotonic() + 240
    while (current := job_row(sessions, job_id)).status not in ("succeeded", "failed"):
        assert time.monotonic() < deadline, crash_stack.log_text("rescuer")[-3000:]
        time.sleep(0.5)
    assert current.status == "succeeded", current.error
    assert 0 < done_at_kill < current.chunks_total

    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT chunk_index, characters FROM usage WHERE job_id = :j ORDER BY chunk_index"), {"j": job_id}
        ).all()
        chunk_chars = conn.execute(
            text('SELECT "index", characters FROM job_chunks WHERE job_id = :j ORDER BY "index"'), {"j": job_id}
        ).all()
    engine.dispose()
    assert [tuple(r) for r in rows] == [tuple(r) for r in chunk_chars]  # each chunk billed exactly once
    assert sum(r[1] for r in rows) == billed_characters(book)  # by the one rule (speech.billing): the book whole
    # The audio is complete: the WAV holds every chunk's audio (plus the pauses between them).
    with engine.connect() as conn:
        speech_s = conn.execute(text("SELECT sum(duration_s) FROM job_chunks WHERE job_id = :j"), {"j": job_id}).scalar_one()
    engine.dispose()
    wav = objects.get_bytes(current.result_key)
    assert wav[:4] == b"RIFF"
    import io
    import wave

    with wave.open(io.BytesIO(wav)) as reader:
        wav_s = reader.getnframes() / reader.getframerate()
    assert speech_s > 10 and speech_s <= wav_s <= speech_s + 0.8 * current.chunks_total + 2
    assert abs(wav_s - current.audio_seconds) < 0.05
    with contextlib.suppress(Exception):
        objects.delete(current.result_key)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[tuple[str, Any]]:
    """A Redis server of this test's own (the shared one must not be restarted under others)."""
    import shutil
    import subprocess

    from tests.support.servers import free_port

    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed")
    port = free_port()
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(tmp_path)]

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        for _ in range(50):
            with contextlib.suppress(redis.ConnectionError):
                if redis.Redis(port=port).ping():
                    break
            time.sleep(0.1)
        return proc

    state = {"proc": start()}

    def restart() -> None:
        state["proc"].kill()
        state["proc"].wait()
        state["proc"] = start()

    yield f"redis://127.0.0.1:{port}/0", restart
    state["proc"].kill()


def test_redis_restart_mid_job_still_succeeds(stack_env: dict[str, str], own_redis, pg_url: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url, restart = own_redis
    env = {**stack_env, "LECTOR_REDIS_URL": url, "LECTOR_STALL_AFTER_S": "3"}
    crash = Stack(env=env, logs=tmp_path)
    engine = make_engine(pg_url)
    sessions = make_sessionmaker(engine)
    objects = s3_store(env)
    try:
        job_id = submit(sessions, objects, excerpt(3000), fmt="mp3", account="redis")
        crash.start_worker("w", queues="synth,cpu")
        crash.start_worker("beat", queues="cpu", pool="solo", beat=True)
        Dispatcher(make_celery(url)).send(TASK_PLAN, str(job_id))
        deadline = time.monotonic() + 180
        while job_row(sessions, job_id).chunks_done == 0:
            assert time.monotonic() < deadline, crash.log_text("w")[-3000:]
            time.sleep(0.2)
        restart()  # every queued message is gone: this Redis keeps nothing
        deadline = time.monotonic() + 300
        while (current := job_row(sessions, job_id)).status not in ("succeeded", "failed"):
            assert time.monotonic() < deadline, (current.status, current.chunks_done, crash.log_text("beat")[-3000:])
            time.sleep(0.5)
        assert current.status == "succeeded", current.error
    finally:
        crash.stop_all()
        engine.dispose()


def _finished(sessions: Any, job_id: uuid.UUID, stack: Stack, name: str) -> Any:
    deadline = time.monotonic() + 240
    while (current := job_row(sessions, job_id)).status not in ("succeeded", "failed"):
        assert time.monotonic() < deadline, stack.log_text(name)[-3000:]
        time.sleep(0.3)
    return current


def test_assembly_on_worker_processes_survives_one_of_them_dying(crash_stack: Stack, pg_url: str, tmp_path: Path) -> None:
    """A cpu worker assembling on three processes (what a many-core host does): the processes
    read the chunks from S3 themselves. One of them is then killed; the next book's assembly
    finds the pool broken, retries on a new one and succeeds."""
    import av
    import psutil

    crash_stack.env["LECTOR_ASSEMBLY_WORKERS"] = "3"
    engine = make_engine(pg_url)
    sessions = make_sessionmaker(engine)
    objects = s3_store(crash_stack.env)
    worker = crash_stack.start_worker("pooled")
    dispatcher = Dispatcher(make_celery(crash_stack.env["LECTOR_REDIS_URL"]))

    first = submit(sessions, objects, excerpt(900), fmt="mp3", account="pool")
    dispatcher.send(TASK_PLAN, str(first))
    done = _finished(sessions, first, crash_stack, "pooled")
    assert done.status == "succeeded", done.error
    assert "worker processes" in crash_stack.log_text("pooled")
    path = tmp_path / "first.mp3"
    path.write_bytes(objects.get_bytes(done.result_key))
    with av.open(str(path)) as container:
        decoded = sum(frame.samples for frame in container.decode(audio=0))
    assert abs(decoded / 24000 - done.audio_seconds) < 0.01

    servers = [p for p in psutil.Process(worker.pid).children() if "forkserver" in " ".join(p.cmdline())]
    pool = [child for server in servers for child in server.children()]  # forked by the forkserver
    assert 1 <= len(pool) <= 3, [p.cmdline() for p in psutil.Process(worker.pid).children(recursive=True)]
    pool[0].kill()  # (the pool starts processes as work needs them: a short book used one or two)

    second = submit(sessions, objects, excerpt(600), fmt="mp3", account="pool")
    dispatcher.send(TASK_PLAN, str(second))
    again = _finished(sessions, second, crash_stack, "pooled")
    engine.dispose()
    log = crash_stack.log_text("pooled")
    assert again.status == "succeeded", (again.error, log[-3000:])
    assert "BrokenProcessPool" in log  # it did break, and the retry made a new pool
