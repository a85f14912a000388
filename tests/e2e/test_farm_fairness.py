"""Fair share between accounts on a farm (``infra/farm``): three hosts in network namespaces (``h1``
cpu and the reaper, ``h2`` and ``h3`` synth) on RabbitMQ, every host with the same account window
(``LECTOR_ACCOUNT_BATCH_WINDOW``, ``scheduler.fair_share``).

One account runs twenty books; another account's short job then waits for at most the first
account's window of batches (plus what the synth hosts already hold), not for one batch per
book. The voice is joe at zero noise (``tests/fixtures/farm.py``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import text

from scheduler import lifecycle
from scheduler.queue import TASK_PLAN
from store.db import create_account
from store.db.session import (
    SessionFactory,
    make_engine,
    make_sessionmaker,
    retrying_conflicts,
    scoped_sessions,
)
from tests.fixtures.farm import FarmStack, wait_for
from tests.support.books import excerpt, job_row, s3_store, submit

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BOOKS = 20
WINDOW = 2
SYNTH_HOSTS = ("h2", "h3")
# Small batches, so each book is several tasks. The live playlist's segment tasks are off: the
# test weighs the synth queue (the playlist has tests of its own, tests/e2e/test_live_playlist.py).
# The short job's assembly runs in threads: a process pool would start a forkserver (numpy, av,
# scipy: ~1 s of CPU) on the cpu host for one sentence.
SETTINGS = {"LECTOR_JOB_BATCH_CHARS": "300", "LECTOR_SYNTH_GROUP_CHARS": "300", "LECTOR_TORCH_THREADS": "1",
            "LECTOR_LIVE_PLAYLIST": "false", "LECTOR_ACCOUNT_BATCH_WINDOW": str(WINDOW), "LECTOR_ASSEMBLY_WORKERS": "1"}


def cancel_as_a_client(sessions: SessionFactory, job_id: uuid.UUID, account_id: uuid.UUID) -> None:
    """Cancel one job in a transaction of its own, run again after a deadlock, as
    ``DELETE /v1/jobs/{id}`` does (``retrying_conflicts``). All the books in one transaction once
    deadlocked with a worker's (rows locked in another order)."""

    def cancel() -> None:
        with sessions() as session:
            lifecycle.cancel(session=session, job_id=job_id, account_id=account_id, window=WINDOW)

    retrying_conflicts(cancel)


@pytest.fixture(scope="module")
def fair_farm(make_farm) -> Iterator[FarmStack]:  # type: ignore[no-untyped-def]
    farm = make_farm("rabbitmq", **SETTINGS)
    farm.start_worker("h1", "cpu", "cpu", beat=True)
    for host in SYNTH_HOSTS:
        farm.start_worker(host, "synth", "synth")
    yield farm


def test_rabbitmq_fair_share_a_short_job_waits_for_one_window_of_another_accounts_batches(
    fair_farm: FarmStack, pg_url: str,
) -> None:
    """Account A submits twenty books (planned on the cpu host: the account's window goes out,
    the rest wait for its turn); once they run, account B submits a short job (plan on the cpu
    host, one batch, assembly). B's batch waits for at most A's window of batches, and what the
    synth hosts held when it came, however many books A runs. Measured: A's batches finished
    between B's submission and its own first chunk, and the seconds to that chunk and to its end."""
    engine = make_engine(pg_url)
    factory = make_sessionmaker(engine)  # the test's own reads and submissions
    sessions = scoped_sessions(factory)
    objects = s3_store(fair_farm.local_env)
    dispatcher = fair_farm.dispatcher()
    books: list[uuid.UUID] = []
    owner: uuid.UUID | None = None
    synths = [f"synth@{host}" for host in SYNTH_HOSTS]
    try:
        with sessions() as session:
            owner = create_account(session=session, name=f"farm-books-{uuid.uuid4().hex[:6]}").id
        for number in range(BOOKS):
            # Each book its own words: the same text would be reused from the account's chunk cache.
            words = excerpt(1200).replace(". ", f". In book {number}, ")
            books.append(submit(factory, objects, f"Book {number}. " + words, fmt="wav", account="", owner=owner))
            dispatcher.send(TASK_PLAN, str(books[-1]))
        # One query a poll, not one a book: polled five times a second while twenty books are
        # planned, a row read per book was thousands of ORM round trips (CPU in this process and
        # PostgreSQL, taken from the suite's workers beside the farm).
        progress = text("SELECT count(*) FILTER (WHERE status = 'running'), coalesce(sum(chunks_done), 0)"
                        " FROM jobs WHERE id = ANY(:books)")

        def planned_and_going() -> bool:
            with engine.connect() as conn:
                running, done = conn.execute(progress, {"books": books}).one()
            return bool(running == BOOKS and done > 0)

        wait_for(planned_and_going, 180, lambda: f"the books were not planned, or made no progress\n{fair_farm.tail()}")
        clock = text("SELECT clock_timestamp()")
        in_flight = text("SELECT count(*) FROM job_batches WHERE job_id = ANY(:books) AND state = 'sent'")
        short = submit(factory, objects, "A short job. It ends here.", fmt="wav", account="farm-short")
        with engine.connect() as conn:
            submitted_at = conn.execute(clock).scalar_one()
            held = conn.execute(in_flight, {"books": books}).scalar_one()
        dispatcher.send(TASK_PLAN, str(short))
        started = time.monotonic()
        row = wait_for(lambda: (r := job_row(factory, short)).is_terminal and r, 240,
                       lambda: f"the short job did not end\n{fair_farm.tail()}", poll_s=0.1)
        ended_s = time.monotonic() - started
        assert row.status == "succeeded", row.error
        with engine.connect() as conn:
            first_done = conn.execute(text("SELECT min(updated_at) FROM job_chunks WHERE job_id = :j"),
                                      {"j": short}).scalar_one()
            # A group's chunks are marked in one transaction (one now()): one distinct time per
            # group, and here a group is a whole batch (engine calls of the batch's size).
            waited = conn.execute(text(
                "SELECT count(DISTINCT (job_id, updated_at)) FROM job_chunks WHERE job_id = ANY(:books)"
                " AND status = 'done' AND updated_at > :since AND updated_at <= :until"
            ), {"books": books, "since": submitted_at, "until": first_done}).scalar_one()
            backlog = conn.execute(text(
                "SELECT count(*) FROM job_chunks WHERE job_id = ANY(:books) AND (status <> 'done' OR updated_at > :since)"
            ), {"books": books, "since": submitted_at}).scalar_one()
            running = conn.execute(text("SELECT count(*) FROM jobs WHERE id = ANY(:books) AND status = 'running'"),
                                   {"books": books}).scalar_one()
            most = conn.execute(text("SELECT count(*) FROM job_batches WHERE job_id = ANY(:books) AND state = 'sent'"),
                                {"books": books}).scalar_one()
        first_s = (first_done - submitted_at).total_seconds()
        print(f"\nfarm rabbitmq fair share: the short job waited {waited} of account A's batches (window {WINDOW}, "  # noqa: T201
              f"{BOOKS} running books, {held} of A's batches in flight when it came, backlog {backlog} chunks), "
              f"first chunk after {first_s:.1f} s, done after {ended_s:.1f} s")
        assert running == BOOKS, "the books ended before the short job: nothing was measured"
        assert held <= WINDOW and most <= WINDOW  # the account's window held
        assert waited <= WINDOW + len(SYNTH_HOSTS)  # its window, and what the hosts held: not one a book
        assert backlog > 2 * BOOKS  # ...when the books had far more to do
    finally:
        stale = {w: fair_farm.tasks_held(w) for w in synths}  # none should stay: the books are canceled
        if owner is not None:
            for book in books:  # what the cancels hand on goes unsent: every book is canceled
                cancel_as_a_client(sessions, book, owner)
        wait_for(lambda: not any(fair_farm.tasks_held(w) for w in synths), 120,
                 lambda: f"the canceled books' batches did not drain (held at the end: {stale})\n{fair_farm.tail()}")
        engine.dispose()
