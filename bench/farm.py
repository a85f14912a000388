"""Control-plane capacity of the book farm: how many chunks a second one broker and one
PostgreSQL carry, with synthesis taken out.

    python -m bench.farm [--books 20] [--chars 20000] [--workers 2] [--threads 4] [--batch-chars 4000]
                         [--group-chars 1500] [--window 4] [--accounts 0]

A CONTROL-PLANE figure, not a synthesis one: the engine is a stand-in that returns a 10 ms clip
at once, and chunk audio goes to a local directory in memory (``/dev/shm``): audio bytes are the
data plane, S3 scales apart from the control plane, and must not cap this figure. Everything
else is lector's own: books submitted through ``scheduler.lifecycle.submit`` (the API's intake
without HTTP), ``plan`` and ``synthesize`` and ``assemble`` as Celery tasks in ``--workers``
worker processes (``--threads`` threads each, ``lector``'s tasks on its Celery app) over the real
broker (the farm's: a RabbitMQ vhost of its own on 127.0.0.1:5672) and a throwaway PostgreSQL
database on 127.0.0.1:5432:
chunk rows marked done with their usage rows, batches handed on, the assembly hand-off.

Printed: chunk completions per second (first plan sent to last chunk done), and what each chunk
cost the broker (RabbitMQ's CPU seconds over the run, the whole node: other users of it count
too) and PostgreSQL (this database's commits and rows written, and the CPU seconds of its
backends), and the workers' own CPU. Then the chunk rate 50 H100 hosts at 1,000x realtime
need at these chunks (``--chars-per-second`` of speech, 15 by default). The last line is
``RESULT chunks_per_s=... need_50_h100=... shared_chunks_per_s=... broker_cpu_ms_per_chunk=...
pg_cpu_ms_per_chunk=...``; ``shared_chunks_per_s`` is the machine's cores over the broker's and
PostgreSQL's CPU per chunk: the rate of the shared parts alone (the workers' Python runs on the
GPU hosts of a farm), derived from this run's costs. The books belong to ``--accounts`` accounts
(default: one each, a farm's many customers): an account keeps at most ``--window`` batches in
flight (``LECTOR_ACCOUNT_BATCH_WINDOW``), so twenty books of one account would leave most of the
workers' threads idle.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from speech.types import AudioChunk, SynthesisOptions

TICK = os.sysconf("SC_CLK_TCK")
H100_HOSTS = 50
REALTIME_X = 1000.0
CLIP_S = 0.01
CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "pride_and_prejudice.txt"


class InstantEngine:
    """A stand-in engine: a 10 ms clip per sentence, at once."""

    sample_rate = 16000

    def phonemize(self, text: str) -> str:
        return text

    def synthesize(self, sentences: Sequence[str], options: SynthesisOptions | None = None) -> list[AudioChunk]:
        from speech.types import AudioChunk

        clip = np.zeros(int(self.sample_rate * CLIP_S), dtype=np.float32)
        return [AudioChunk(clip, self.sample_rate, text, []) for text in sentences]


def worker(name: str, threads: int) -> None:
    """One worker process: lector's tasks and resources, the stand-in engine in place of voices."""
    from lector.settings import Settings
    from lector.wiring import resolved_broker_url
    from lector.worker import build_resources
    from scheduler.queue import QUEUES, Dispatcher, make_celery
    from speech.synthesizer import Synthesizer
    from workers import tasks
    from workers.resources import Lazy, Resources

    settings = Settings()
    app = make_celery(resolved_broker_url(settings), visibility_timeout_s=settings.visibility_timeout_s,
                      heartbeat_s=settings.broker_heartbeat_s)
    engine = InstantEngine()

    def build() -> Resources:
        resources = build_resources(settings, Dispatcher(app))
        resources.synthesizer = Synthesizer(lambda voice: engine)
        return resources

    tasks.register(app, Lazy(build))
    app.worker_main(["worker", "--queues", ",".join(QUEUES), "--pool", "threads", "--concurrency", str(threads),
                     "--hostname", f"{name}@bench", "--loglevel", "WARNING", "--without-gossip", "--without-mingle"])


def cpu_seconds(pid: int) -> float:
    """User and system CPU of a process and its reaped children (threads included)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / TICK


def rabbit_pid() -> int | None:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "beam.smp":
                    return int(entry.name)
            except OSError:
                continue
    return None


def rabbitmqctl(*args: str) -> None:
    subprocess.run(["rabbitmqctl", "-q", *args], check=True, capture_output=True, timeout=60)


def main() -> int:  # noqa: PLR0915 - one linear script
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--books", type=int, default=20)
    parser.add_argument("--chars", type=int, default=20000, help="characters per book")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4, help="threads per worker process")
    parser.add_argument("--batch-chars", type=int, default=4000, help="LECTOR_JOB_BATCH_CHARS")
    parser.add_argument("--group-chars", type=int, default=1500, help="LECTOR_SYNTH_GROUP_CHARS (GPU: 20000)")
    parser.add_argument("--window", type=int, default=4, help="LECTOR_ACCOUNT_BATCH_WINDOW")
    parser.add_argument("--accounts", type=int, default=0,
                        help="accounts the books are spread over (a farm's many customers); 0: one a book")
    parser.add_argument("--chars-per-second", type=float, default=15.0, help="characters of speech per audio second")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.threads)
        return 0

    import sqlalchemy as sa

    from scheduler import lifecycle
    from scheduler.intake import JobSpec
    from scheduler.queue import Dispatcher, make_celery
    from store.db import create_account
    from store.db.migrate import upgrade
    from store.db.session import make_engine, make_sessionmaker, scoped_sessions
    from store.objects.local import LocalObjectStore

    source = CORPUS.read_text(encoding="utf-8")
    admin = sa.create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/postgres", isolation_level="AUTOCOMMIT")
    db = f"lector_bench_farm_{uuid.uuid4().hex[:8]}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{db}"'))
    url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{db}"
    objects_dir = Path(tempfile.mkdtemp(prefix="lector-bench-farm-", dir="/dev/shm"))
    vhost = f"lector-bench-{uuid.uuid4().hex[:8]}"
    rabbitmqctl("add_vhost", vhost)
    rabbitmqctl("set_permissions", "-p", vhost, "guest", ".*", ".*", ".*")
    broker = f"amqp://guest:guest@127.0.0.1:5672/{vhost}"
    procs: list[subprocess.Popen[bytes]] = []
    engine = make_engine(url)
    try:
        upgrade(url)
        env = {k: v for k, v in os.environ.items() if not k.startswith("LECTOR_")} | {
            "LECTOR_ENV": "test", "LECTOR_DATABASE_URL": url, "LECTOR_BROKER_URL": broker,
            "LECTOR_OBJECTS_DIR": str(objects_dir), "LECTOR_DATA_DIR": str(objects_dir / "data"),
            "LECTOR_JOB_BATCH_CHARS": str(args.batch_chars), "LECTOR_ACCOUNT_BATCH_WINDOW": str(args.window),
            "LECTOR_SYNTH_GROUP_CHARS": str(args.group_chars),
            "LECTOR_ASSEMBLY_WORKERS": "1", "LECTOR_TORCH_THREADS": "1",
        }
        for i in range(args.workers):
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "bench.farm", "--worker", f"w{i}", "--threads", str(args.threads)],
                env=env, start_new_session=True,
            ))
        sessions = scoped_sessions(make_sessionmaker(engine))
        objects = LocalObjectStore(objects_dir)
        # Each book a stretch of the novel of its own: books of one text would be copied from the
        # account's chunk cache (scheduler.chunk_cache), not rendered, and bill nothing.
        start_at = source.index("It is a truth universally acknowledged")
        novel = source[start_at:]
        texts = []
        for n in range(args.books):
            begin = (n * args.chars) % max(len(novel) - args.chars, 1)
            piece = novel[begin:begin + args.chars]
            texts.append(piece[: piece.rfind(".") + 1])
        text_chars = sum(len(t) for t in texts) / len(texts)
        intake_started = time.perf_counter()
        messages = []
        with sessions() as session:
            accounts = [create_account(session=session, name=f"bench-{uuid.uuid4().hex[:6]}").id
                        for _ in range(args.accounts or args.books)]
        for n in range(args.books):
            with sessions() as session:
                spec = JobSpec(text=f"Book {n}. " + texts[n], speaker="joe", model_id="mistv3", lang="en", format="wav")
                _, _, sent = lifecycle.submit(session=session, objects=objects, account_id=accounts[n % len(accounts)],
                                              spec=spec,
                                              idempotency_key=None, allow_private_webhooks=False)
            messages.extend(sent)
        intake_s = time.perf_counter() - intake_started
        time.sleep(8)  # the workers connect and declare their queues (not timed)
        rabbit = rabbit_pid()
        rabbit_cpu0 = cpu_seconds(rabbit) if rabbit else 0.0
        stat = sa.text("SELECT xact_commit, tup_inserted + tup_updated + tup_deleted FROM pg_stat_database"
                       " WHERE datname = current_database()")
        with engine.connect() as conn:
            commits0, rows0 = conn.execute(stat).one()
        workers_cpu0 = sum(cpu_seconds(p.pid) for p in procs)
        started = time.perf_counter()
        Dispatcher(make_celery(broker)).send_all(messages)
        progress = sa.text("SELECT coalesce(sum(chunks_done), 0), coalesce(sum(chunks_total), 0),"
                           " count(*) FILTER (WHERE status = 'succeeded'), count(*) FROM jobs")
        chunks_at = None
        deadline = time.monotonic() + 900
        # One connection for the whole watch, each look rolled back: a checkout per look would
        # count its pool pre-ping (an autocommit SELECT 1) among the commits measured, twenty a
        # second, so the figure would grow with the run's length.
        with engine.connect() as watch:
            while time.monotonic() < deadline:
                done, total, succeeded, jobs = watch.execute(progress).one()
                watch.rollback()
                if chunks_at is None and total and done >= total and jobs == args.books:
                    chunks_at = time.perf_counter()
                if succeeded == args.books:
                    break
                time.sleep(0.05)
            else:
                print("the books did not finish in 15 minutes", file=sys.stderr)  # noqa: T201
                return 1
        ended = time.perf_counter()
        with engine.connect() as conn:
            commits1, rows1 = conn.execute(stat).one()
            pg_pids = [r[0] for r in conn.execute(sa.text(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"))]
            batches = conn.execute(sa.text("SELECT count(*) FROM job_batches WHERE state = 'done'")).scalar_one()
        pg_cpu = sum(cpu_seconds(pid) for pid in pg_pids)  # the backends' whole life: this run's connections
        rabbit_cpu = (cpu_seconds(rabbit) - rabbit_cpu0) if rabbit else float("nan")
        workers_cpu = sum(cpu_seconds(p.pid) for p in procs) - workers_cpu0
        assert chunks_at is not None
        chunk_s = chunks_at - started
        rate = total / chunk_s
        audio_per_chunk = (text_chars / (total / args.books)) / args.chars_per_second
        need = H100_HOSTS * REALTIME_X / audio_per_chunk
        print("control plane only (stand-in engine, chunk audio in /dev/shm): broker RabbitMQ, "  # noqa: T201
              f"{args.workers} workers x {args.threads} threads, batches of {args.batch_chars} chars, engine calls of "
              f"{args.group_chars}, {os.cpu_count()} CPUs")
        print(f"books {args.books} x {text_chars:.0f} chars: {total} chunks ({total / args.books:.1f} a book, "  # noqa: T201
              f"~{audio_per_chunk:.0f} s of speech each at {args.chars_per_second:g} chars/s), "
              f"{batches} synthesize tasks; intake {args.books / intake_s:.1f} books/s")
        print(f"chunks done in {chunk_s:.2f} s: {rate:.0f} chunks/s; every book assembled after "  # noqa: T201
              f"{ended - started:.2f} s")
        print(f"per chunk: broker (RabbitMQ node CPU) {1000 * rabbit_cpu / total:.2f} ms, PostgreSQL "  # noqa: T201
              f"{(commits1 - commits0) / total:.2f} commits, {(rows1 - rows0) / total:.1f} rows written, "
              f"backends' CPU {1000 * pg_cpu / total:.2f} ms; workers' CPU {1000 * workers_cpu / total:.2f} ms")
        print(f"50 H100 hosts at 1,000x realtime need {need:.0f} chunks/s: "  # noqa: T201
              f"{'sustained' if rate >= need else 'NOT sustained'} ({rate / need:.2f}x)")
        # The shared parts alone: what this machine's cores would carry if the workers' Python ran
        # on their own hosts (a farm's GPU hosts), from the CPU each chunk cost the broker and
        # PostgreSQL's backends in this run. An arithmetic bound, not a second measurement.
        shared_ms = 1000 * (rabbit_cpu + pg_cpu) / total
        shared_rate = (os.cpu_count() or 1) * 1000 / shared_ms
        print(f"shared parts (broker + PostgreSQL) {shared_ms:.2f} ms of CPU a chunk: {os.cpu_count()} cores carry "  # noqa: T201
              f"{shared_rate:.0f} chunks/s, {shared_rate / need:.2f}x what 50 H100 hosts need")
        print(f"RESULT chunks_per_s={rate:.1f} need_50_h100={need:.1f} shared_chunks_per_s={shared_rate:.0f} "  # noqa: T201
              f"broker_cpu_ms_per_chunk={1000 * rabbit_cpu / total:.3f} pg_cpu_ms_per_chunk={1000 * pg_cpu / total:.3f} "
              f"pg_commits_per_chunk={(commits1 - commits0) / total:.2f} worker_cpu_ms_per_chunk={1000 * workers_cpu / total:.3f}")
        return 0
    finally:
        for proc in procs:
            try:
                os.killpg(proc.pid, 9)
            except ProcessLookupError:
                pass
            proc.wait()
        engine.dispose()
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)'))
        admin.dispose()
        subprocess.run(["rabbitmqctl", "-q", "delete_vhost", vhost], capture_output=True, timeout=60, check=False)
        shutil.rmtree(objects_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
