"""A book rendered on a farm (``tests/fixtures/farm.py``), with or without a fault struck mid-book,
and the checks every farm test makes of it: the job succeeded, every chunk was billed once, and
the file can be compared sample for sample with the fault-free render.

Why a module of its own: the farm tests are split over several files, so that ``make test``'s
workers (``--dist loadfile``) run them side by side; each file builds its own farm and its own
fault-free reference, and they all render the same book the same way.
"""

from __future__ import annotations

import io
import time
import uuid
import wave
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text

from scheduler.queue import TASK_ASSEMBLE, TASK_PLAN, TASK_SYNTHESIZE
from store.db.session import make_engine, make_sessionmaker
from tests.fixtures.farm import FarmStack, wait_for
from tests.support.books import excerpt, job_row, s3_store, submit

# About 1,150 characters (10 chunks, some 55 s of audio): every render of it is CPU the farm's
# lane takes from the suite's workers beside it (joe at one thread: ~3.8 ms of CPU a character),
# and each file renders it four times. What the tests need of it is its shape, not its length:
# several tasks on each synth host (with 150-character batches, 8 batches, as the 2,369-character
# book had 10 of 300), so that a fault strikes mid-book with chunks done and chunks to come.
BOOK = excerpt(1200)
# Small batches, so the book is many tasks and both synth hosts hold one when the victim dies.
# The live playlist's segment tasks are off: these tests follow the synth and assemble tasks on
# the cpu queue, and the playlist has tests of its own (tests/e2e/test_live_playlist.py).
# Assembly on one worker runs in threads (``books.parallel``): a process pool would start a
# forkserver (numpy, av, scipy, ~1 s of CPU) in every cpu worker the tests start, for a book of a
# minute; a host's loss mid-assembly is the same loss either way (its PostgreSQL session, holding
# the assembly lock, and its unacknowledged task).
SMALL_BATCHES = {"LECTOR_JOB_BATCH_CHARS": "150", "LECTOR_SYNTH_GROUP_CHARS": "150", "LECTOR_TORCH_THREADS": "1",
                 "LECTOR_LIVE_PLAYLIST": "false", "LECTOR_ASSEMBLY_WORKERS": "1"}
#: With RabbitMQ the job ends within this of a host's loss (issue 28).
RABBIT_BOUND_S = 90.0
#: The reaper's stall time on the Redis farms (``LECTOR_STALL_AFTER_S``; docs/scaling.md).
REDIS_STALL_S = 20
#: The reaper's period (``scheduler.queue``'s beat schedule).
REAPER_EVERY_S = 30


def redis_bound_s(*references: Render) -> float:
    """With Redis, the job ends within the stall time, one sweep of the reaper, and what is left
    of the book (docs/scaling.md): here at most the whole book on one synth host of the two,
    twice the fault-free render's time on this machine as loaded now. With several references
    (one before the fault and one after, where the machine's load swings), the slower one."""
    return REDIS_STALL_S + REAPER_EVERY_S + 2 * max(r.took_s for r in references)


@dataclass(frozen=True)
class Render:
    job_id: uuid.UUID
    frames: bytes  # the WAV's samples
    lost_to_end_s: float | None = None
    ended_at: float = 0.0  # wall clock (S3's Last-Modified is wall clock)
    struck: str | None = None  # the host the fault hit
    took_s: float = 0.0  # from submission to the job's end


def frames_of(wav: bytes) -> bytes:
    with wave.open(io.BytesIO(wav)) as reader:
        return reader.readframes(reader.getnframes())


def render(
    farm: FarmStack, pg_url: str, *, victim: str | tuple[str, ...] | None = None,
    fault: Callable[[str], None] | None = None, timeout_s: float = 240, assembly: bool = False,
) -> Render:
    """Submit the book, and when ``victim`` (a host, or whichever of several takes it first) has
    just taken a synthesize task mid-book (``assembly``: the book's assemble task, on its cpu
    worker), ``fault`` it (default: kill it). Fails unless the job succeeds with every chunk billed
    once."""
    engine = make_engine(pg_url)
    sessions = make_sessionmaker(engine)
    objects = s3_store(farm.local_env)
    try:
        job_id = submit(sessions, objects, BOOK, fmt="wav", account="farm")
        submitted = time.monotonic()
        farm.dispatcher().send(TASK_PLAN, str(job_id))
        lost_at, struck = None, None
        if victim is not None:
            hosts = (victim,) if isinstance(victim, str) else victim
            task = TASK_ASSEMBLE if assembly else TASK_SYNTHESIZE
            holders = {host: f"{'cpu' if assembly else 'synth'}@{host}" for host in hosts}
            seen = {host: farm.tasks_held(holder, task) for host, holder in holders.items()}

            def mid_book() -> str | None:
                """The host that has just received a task (its engine call is ahead of it, so the
                chunks it holds are still pending; or its assembly has just begun) while the book
                is part done (or assembling)."""
                for host, holder in holders.items():
                    fresh = farm.tasks_held(holder, task) - seen[host]
                    if not fresh:
                        continue
                    row = job_row(sessions, job_id)
                    if assembly and row.status == "running":
                        continue  # received, and its first step (the status) not yet taken: look again
                    seen[host].update(fresh)
                    if (row.status == "assembling") if assembly else (0 < row.chunks_done < row.chunks_total):
                        return host
                return None

            struck = wait_for(mid_book, timeout_s, lambda: f"{hosts} never held a {task} task mid-book\n{farm.tail()}",
                              poll_s=0.05)
            (fault or farm.farm.kill)(struck)
            lost_at = time.monotonic()
            expected = "assembling" if assembly else "running"
            assert job_row(sessions, job_id).status == expected, "the book went on before the loss"
        row = wait_for(
            lambda: (r := job_row(sessions, job_id)).status in ("succeeded", "failed") and r,
            timeout_s, lambda: f"the job did not end\n{farm.tail()}", poll_s=0.25,
        )
        ended = time.monotonic()
        assert row.status == "succeeded", row.error
        with engine.connect() as conn:
            usage = conn.execute(
                text("SELECT chunk_index, characters FROM usage WHERE job_id = :j ORDER BY chunk_index"), {"j": job_id}
            ).all()
            chunks = conn.execute(
                text('SELECT "index", characters FROM job_chunks WHERE job_id = :j ORDER BY "index"'), {"j": job_id}
            ).all()
        assert len(chunks) > 4
        assert [tuple(r) for r in usage] == [tuple(r) for r in chunks]  # every chunk billed, and once
        return Render(job_id, frames_of(objects.get_bytes(row.result_key)),
                      None if lost_at is None else ended - lost_at, time.time(), struck, ended - submitted)
    finally:
        engine.dispose()


def start_hosts(farm: FarmStack) -> FarmStack:
    """The farm's usual layout: ``h1`` cpu with the reaper, ``h2`` and ``h3`` synth."""
    farm.start_worker("h1", "cpu", "cpu", beat=True)
    farm.start_worker("h2", "synth", "synth")
    farm.start_worker("h3", "synth", "synth")
    return farm


def revived(farm: FarmStack, host: str, *, beat: tuple[str, str] = ("h1", "cpu")) -> None:
    """``host`` back on the bridge with fresh workers of the kinds it ran (after a test killed
    it); the worker ``beat`` names (host, worker) runs the reaper."""
    if not farm.farm.pids(host):
        farm.farm.revive(host)
        for name in dict.fromkeys(w.split("@")[0] for w in farm.started if w.endswith(f"@{host}")):
            farm.start_worker(host, name, name, beat=(host, name) == beat)


def thawed_zombie_harmless(farm: FarmStack, pg_url: str, faulted: Render, reference: Render, victim: str) -> None:
    """Thaw ``victim`` (frozen while it held a synthesize task of ``faulted``'s book, which ended
    without it) and wait until the zombie has finished that task: it must bill nothing twice,
    leave the finished file as it was and write no chunk audio after the book ended."""
    held = farm.tasks_held(f"synth@{victim}")
    assert held, "the frozen host held no task"
    farm.farm.thaw(victim)
    wait_for(lambda: not (held & farm.tasks_held(f"synth@{victim}")), 120,
             lambda: f"the zombie never finished its task\n{farm.tail()}")
    objects = s3_store(farm.local_env)
    engine = make_engine(pg_url)
    try:
        with engine.connect() as conn:
            usage = conn.execute(text("SELECT count(*), count(DISTINCT chunk_index) FROM usage WHERE job_id = :j"),
                                 {"j": faulted.job_id}).one()
            total = conn.execute(text("SELECT count(*) FROM job_chunks WHERE job_id = :j"), {"j": faulted.job_id}).scalar_one()
            result_key = conn.execute(text("SELECT result_key FROM jobs WHERE id = :j"), {"j": faulted.job_id}).scalar_one()
    finally:
        engine.dispose()
    assert tuple(usage) == (total, total)  # still billed once per chunk
    assert frames_of(objects.get_bytes(result_key)) == reference.frames
    late = [key for key, modified in modified_under(objects, f"jobs/{faulted.job_id}/chunks/") if modified > faulted.ended_at]
    assert late == [], f"the zombie rewrote chunks after the book ended: {late}"


def modified_under(objects: Any, prefix: str) -> list[tuple[str, float]]:
    """(key, Last-Modified as a timestamp) of every object under ``prefix``."""
    client = objects._client  # the store's own boto3 client
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=objects.bucket, Prefix=prefix)
    return [(o["Key"], o["LastModified"].timestamp()) for page in pages for o in page.get("Contents", [])]
