"""Host loss on a farm (``infra/farm``): three hosts in network namespaces (``h1`` cpu and the
reaper, ``h2`` and ``h3`` synth) sharing PostgreSQL, Swift and one broker through a private bridge.

A synth host holding a task vanishes (link down, then SIGKILL: its TCP connections stay half-open,
nobody tells the broker). The job still succeeds, its WAV equals the no-fault render sample for
sample, and every chunk is billed exactly once. On RabbitMQ the lost task comes back when the
host's heartbeats stop, so the job ends within 90 s of the loss; on Redis only the reaper brings
it back, after ``LECTOR_STALL_AFTER_S`` (here 20 s; docs/scaling.md gives the bound).
The voice is joe at zero noise (``tests/fixtures/farm.py``), so two renders can be compared.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import threading
import time
import uuid
import wave
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest
from sqlalchemy import text

from scheduler.queue import TASK_ASSEMBLE, TASK_PLAN, TASK_SYNTHESIZE
from store.db.session import make_engine, make_sessionmaker
from tests.fixtures.farm import FarmStack, rabbitmqctl, wait_for
from tests.support.books import excerpt, job_row, s3_store, submit

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BOOK = excerpt(2400)
# Small batches, so the book is many tasks and both synth hosts hold one when the victim dies.
# The live playlist's segment tasks are off: these tests follow the synth and assemble tasks on
# the cpu queue, and the playlist has tests of its own (tests/e2e/test_live_playlist.py).
SMALL_BATCHES = {"LECTOR_JOB_BATCH_CHARS": "300", "LECTOR_SYNTH_GROUP_CHARS": "300", "LECTOR_TORCH_THREADS": "1",
                 "LECTOR_LIVE_PLAYLIST": "false"}
RABBIT_BOUND_S = 90.0
REDIS_STALL_S = 20


@dataclass(frozen=True)
class Render:
    job_id: uuid.UUID
    frames: bytes  # the WAV's samples
    lost_to_end_s: float | None = None
    ended_at: float = 0.0  # wall clock (S3's Last-Modified is wall clock)
    struck: str | None = None  # the host the fault hit


def _frames(wav: bytes) -> bytes:
    with wave.open(io.BytesIO(wav)) as reader:
        return reader.readframes(reader.getnframes())


def render(
    farm: FarmStack, pg_url: str, *, victim: str | tuple[str, ...] | None = None,
    fault: Callable[[str], None] | None = None, timeout_s: float = 240, assembly: bool = False,
) -> Render:
    """Submit the book, and when ``victim`` (a host, or whichever of several takes it first) has
    just taken a synthesize task mid-book (``assembly``: the book's assemble task, on its cpu
    worker), ``fault`` it (default: kill it)."""
    engine = make_engine(pg_url)
    sessions = make_sessionmaker(engine)
    objects = s3_store(farm.local_env)
    try:
        job_id = submit(sessions, objects, BOOK, fmt="wav", account="farm")
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
                    seen[host].update(fresh)
                    if not fresh:
                        continue
                    row = job_row(sessions, job_id)
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
        return Render(job_id, _frames(objects.get_bytes(row.result_key)),
                      None if lost_at is None else ended - lost_at, time.time(), struck)
    finally:
        engine.dispose()


def _start(farm: FarmStack) -> FarmStack:
    farm.start_worker("h1", "cpu", "cpu", beat=True)
    farm.start_worker("h2", "synth", "synth")
    farm.start_worker("h3", "synth", "synth")
    return farm


@pytest.fixture(scope="module")
def rabbit_farm(make_farm) -> Iterator[FarmStack]:  # type: ignore[no-untyped-def]
    yield _start(make_farm("rabbitmq", **SMALL_BATCHES))


@pytest.fixture(scope="module")
def reference(rabbit_farm: FarmStack, pg_url: str) -> Render:
    """The book rendered with every host up."""
    return render(rabbit_farm, pg_url)


def test_rabbitmq_synth_host_lost_mid_book(rabbit_farm: FarmStack, reference: Render, pg_url: str) -> None:
    faulted = render(rabbit_farm, pg_url, victim="h2")
    assert faulted.lost_to_end_s is not None
    print(f"\nfarm rabbitmq synth host killed: loss to job end {faulted.lost_to_end_s:.1f} s")  # noqa: T201
    assert faulted.frames == reference.frames  # sample for sample
    assert faulted.lost_to_end_s < RABBIT_BOUND_S


def _revived(farm: FarmStack, host: str) -> None:
    """``host`` back on the bridge with fresh workers of the kinds it ran (after a test killed
    it); ``h1``'s cpu worker runs the reaper."""
    if not farm.farm.pids(host):
        farm.farm.revive(host)
        for name in dict.fromkeys(w.split("@")[0] for w in farm.started if w.endswith(f"@{host}")):
            farm.start_worker(host, name, name, beat=(host, name) == ("h1", "cpu"))


def test_rabbitmq_frozen_host_thaws_as_a_harmless_zombie(rabbit_farm: FarmStack, reference: Render, pg_url: str) -> None:
    """A synth host frozen mid-task (SIGSTOP) looks dead to RabbitMQ once its heartbeats stop: the
    task goes to another host and the book ends. Thawed, the zombie finishes the task it held; it
    must write nothing over the chunks another host already stored, bill nothing twice, and leave
    the finished file alone."""
    _revived(rabbit_farm, "h2")
    victim = "h3"
    faulted = render(rabbit_farm, pg_url, victim=victim, fault=rabbit_farm.farm.freeze)
    assert faulted.lost_to_end_s is not None
    print(f"\nfarm rabbitmq synth host frozen: freeze to job end {faulted.lost_to_end_s:.1f} s")  # noqa: T201
    assert faulted.frames == reference.frames
    held = rabbit_farm.tasks_held(f"synth@{victim}")
    assert held, "the frozen host held no task"
    rabbit_farm.farm.thaw(victim)
    wait_for(lambda: not (held & rabbit_farm.tasks_held(f"synth@{victim}")), 120,
             lambda: f"the zombie never finished its task\n{rabbit_farm.tail()}")
    objects = s3_store(rabbit_farm.local_env)
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
    assert _frames(objects.get_bytes(result_key)) == reference.frames
    late = [key for key, modified in _modified(objects, f"jobs/{faulted.job_id}/chunks/") if modified > faulted.ended_at]
    assert late == [], f"the zombie rewrote chunks after the book ended: {late}"


def test_rabbitmq_synth_host_cut_from_postgresql_only(rabbit_farm: FarmStack, reference: Render, pg_url: str) -> None:
    """A synth host loses PostgreSQL alone (its packets to it dropped) just as it takes a task; the
    broker still hears it. Its database calls fail within seconds (``store.db.session``'s TCP
    timeouts), the task is retried through the broker, another host does it, and the book ends."""
    _revived(rabbit_farm, "h2")
    victim = "h2"
    port = int(urlsplit(rabbit_farm.local_env["LECTOR_DATABASE_URL"]).port or 5432)
    try:
        faulted = render(rabbit_farm, pg_url, victim=victim, fault=lambda host: rabbit_farm.farm.cut(host, port))
    finally:
        rabbit_farm.farm.mend(victim)
    assert faulted.lost_to_end_s is not None
    print(f"\nfarm rabbitmq synth host cut from postgresql: cut to job end {faulted.lost_to_end_s:.1f} s")  # noqa: T201
    assert faulted.frames == reference.frames
    assert faulted.lost_to_end_s < RABBIT_BOUND_S


def test_rabbitmq_assembly_host_lost_mid_assembly(rabbit_farm: FarmStack, reference: Render, pg_url: str) -> None:
    """The cpu host assembling the book vanishes. The broker requeues ``assemble`` to the other
    cpu worker once the heartbeats stop; the dead host's PostgreSQL session, which holds the
    job's assembly lock, ends when the server's keepalives find its client gone
    (``store.db.session``), and the second assembly writes the same file."""
    _revived(rabbit_farm, "h2")
    if "cpu@h3" not in rabbit_farm.started:
        rabbit_farm.start_worker("h3", "cpu", "cpu")  # a second cpu worker, to take the task over
    try:
        faulted = render(rabbit_farm, pg_url, victim=("h1", "h3"), assembly=True)
    finally:
        for host in ("h1", "h3"):
            _revived(rabbit_farm, host)
    assert faulted.lost_to_end_s is not None
    print(f"\nfarm rabbitmq assembly host ({faulted.struck}) killed: loss to job end {faulted.lost_to_end_s:.1f} s")  # noqa: T201
    assert faulted.frames == reference.frames
    assert faulted.lost_to_end_s < RABBIT_BOUND_S


def test_rabbitmq_synth_worker_drains_on_sigterm(rabbit_farm: FarmStack, reference: Render, pg_url: str) -> None:
    """SIGTERM (a scale-down, a drain) to a synth worker that has just taken a task: Celery's warm
    shutdown takes no more tasks and finishes the one it holds, acknowledges it, and exits. The
    task is finished there (not lost, not done twice), the book ends the same, billed once."""
    _revived(rabbit_farm, "h2")
    victim = "h2"
    worker = f"synth@{victim}"
    termed: dict[str, object] = {}
    stale = rabbit_farm.tasks_held(worker)  # received by a killed incarnation of the worker, never finished

    def reap(pid: int) -> None:
        """Note when the worker (this process's child) exits."""
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        termed["exited"] = time.monotonic()

    def terminate(host: str) -> None:
        termed["pid"] = pid = rabbit_farm.farm.hosts[host].workers["synth"]
        termed["held"] = rabbit_farm.tasks_held(worker) - stale
        termed["at"] = time.monotonic()
        os.kill(pid, signal.SIGTERM)
        threading.Thread(target=reap, args=(pid,), daemon=True).start()

    faulted = render(rabbit_farm, pg_url, victim=victim, fault=terminate)
    held = set(termed["held"])  # type: ignore[call-overload]
    wait_for(lambda: "exited" in termed, 120, lambda: f"the worker did not exit after SIGTERM\n{rabbit_farm.tail()}")
    exit_s = float(termed["exited"]) - float(termed["at"])  # type: ignore[arg-type]
    try:
        log = rabbit_farm.log_text(worker)
        assert held, "the worker held no task at SIGTERM"
        for task_id in held:  # finished where it ran: succeeded, not handed back
            assert f"lector.synthesize[{task_id}] succeeded" in log, log[-3000:]
        assert faulted.lost_to_end_s is not None
        print(f"\nfarm rabbitmq synth worker SIGTERM: worker exited after {exit_s:.1f} s, "  # noqa: T201
              f"job end {faulted.lost_to_end_s:.1f} s after the signal")
        assert faulted.frames == reference.frames
        assert exit_s < 60  # promptly: one batch's work, not a grace period's
    finally:
        _revived(rabbit_farm, victim)


def _modified(objects, prefix: str) -> list[tuple[str, float]]:  # type: ignore[no-untyped-def]
    """(key, Last-Modified as a timestamp) of every object under ``prefix``."""
    client = objects._client  # the store's own boto3 client
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=objects.bucket, Prefix=prefix)
    return [(o["Key"], o["LastModified"].timestamp()) for page in pages for o in page.get("Contents", [])]


def test_rabbitmq_queues_are_quorum_queues(rabbit_farm: FarmStack, reference: Render) -> None:
    """What the workers and the sender declared on the farm's vhost (after a book went through)."""
    vhost = rabbit_farm.broker_url.rsplit("/", 1)[1]
    listed = dict(line.split("\t")[:2] for line in rabbitmqctl("list_queues", "-p", vhost, "name", "type").splitlines()
                  if "\t" in line)
    assert listed.get("synth") == "quorum" and listed.get("cpu") == "quorum", listed


def test_redis_hosts_lost_mid_book_wait_for_the_reaper(
    make_farm, spare_redis_url: str, reference: Render, pg_url: str,  # type: ignore[no-untyped-def]
) -> None:
    """On Redis the dead host's task is gone with its half-open connection: the reaper (every 30 s,
    after ``LECTOR_STALL_AFTER_S`` without progress) re-sends the book's missing batches, or its
    assembly. One farm, two books: a synth host killed mid-book, then the cpu host killed
    mid-assembly. The reaper runs on ``h3``'s synth worker here, so it outlives both; the cpu
    worker that takes the re-sent assembly starts on ``h3`` as ``h1`` dies (so that ``h1`` is
    sure to be the one assembling; it is ready long before the reaper's stall time)."""
    farm = make_farm(spare_redis_url, **SMALL_BATCHES, LECTOR_STALL_AFTER_S=str(REDIS_STALL_S))
    farm.start_worker("h1", "cpu", "cpu")
    farm.start_worker("h2", "synth", "synth")
    farm.start_worker("h3", "synth", "synth", beat=True)
    bound = REDIS_STALL_S + 30 + 60  # stall + one sweep + the rest of the book (docs/scaling.md)

    def kill_and_replace(host: str) -> None:
        farm.farm.kill(host)
        farm.start_worker("h3", "cpu", "cpu")

    try:
        synth = render(farm, pg_url, victim="h2", timeout_s=REDIS_STALL_S + 150)
        assembly = render(farm, pg_url, victim="h1", assembly=True, fault=kill_and_replace,
                          timeout_s=REDIS_STALL_S + 150)
    finally:
        farm.farm.down()  # before the leased Redis database is flushed and given back
    assert synth.lost_to_end_s is not None and assembly.lost_to_end_s is not None
    print(f"\nfarm redis synth host killed: loss to job end {synth.lost_to_end_s:.1f} s")  # noqa: T201
    print(f"farm redis assembly host ({assembly.struck}) killed: loss to job end {assembly.lost_to_end_s:.1f} s")  # noqa: T201
    assert synth.frames == reference.frames and assembly.frames == reference.frames
    assert synth.lost_to_end_s < bound and assembly.lost_to_end_s < bound


def test_rabbitmq_broker_restarted_mid_book(make_farm, reference: Render, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    """The farm's broker (a node of this test's own) crashes (SIGKILL) just as a synth host takes
    a task, and starts again: what it had confirmed is still queued (quorum queues), what it had
    delivered comes back, the workers reconnect, and the book ends the same."""
    farm = _start(make_farm("own-rabbitmq", **SMALL_BATCHES))
    assert farm.rabbit is not None
    rabbit = farm.rabbit

    def restart(_host: str) -> None:
        rabbit.crash()
        rabbit.start()

    try:
        faulted = render(farm, pg_url, victim="h2", fault=restart)
    finally:
        farm.farm.down()
        rabbit.crash()
    assert faulted.lost_to_end_s is not None
    print(f"\nfarm rabbitmq broker crashed and restarted: broker back to job end {faulted.lost_to_end_s:.1f} s")  # noqa: T201
    assert faulted.frames == reference.frames
    assert faulted.lost_to_end_s < RABBIT_BOUND_S
