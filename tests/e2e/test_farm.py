"""Fair share between customers on a farm (``infra/farm``): three hosts in network namespaces
(``h1`` cpu and the reaper, ``h2`` and ``h3`` synth) sharing PostgreSQL, Swift and RabbitMQ through
a private bridge. The host-loss tests are in ``test_farm_rabbitmq_*.py`` and
``test_farm_redis_*.py``, one file each for a few faults, so that ``make test``'s workers run them
side by side (``tests/support/farm_books.py`` is what they share).
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
from store.db.session import make_engine, make_sessionmaker, scoped_sessions
from tests.fixtures.farm import FarmStack, wait_for
from tests.support.books import excerpt, job_row, s3_store, submit
from tests.support.farm_books import SMALL_BATCHES, start_hosts
from tests.support.farm_books import revived as _revived

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def rabbit_farm(make_farm) -> Iterator[FarmStack]:  # type: ignore[no-untyped-def]
    yield start_hosts(make_farm("rabbitmq", **SMALL_BATCHES))


FAIR_BOOKS = 20


def test_rabbitmq_fair_share_a_short_job_waits_one_batch_per_book(rabbit_farm: FarmStack, pg_url: str) -> None:
    """One account's 20 books run, each keeping one batch on the synth queue (the window of one
    of a cpu host with ``LECTOR_JOB_BATCH_WINDOW=1``: the test plans the books as that host
    would, the farm's own cpu host keeps the module's settings); then another account's short
    job goes through the farm (plan on the cpu host, one batch, assembly). It waits for at most
    one batch per running book (and those the hosts held when it came), not for the backlog.
    Measured: the books' batches finished between its submission and its own batch, and the
    seconds to its first chunk and to its end."""
    _revived(rabbit_farm, "h2")
    engine = make_engine(pg_url)
    factory = make_sessionmaker(engine)  # the test's own reads and submissions
    sessions = scoped_sessions(factory)  # what lifecycle steps take
    objects = s3_store(rabbit_farm.local_env)
    dispatcher = rabbit_farm.dispatcher()
    books: list[uuid.UUID] = []
    owner: uuid.UUID | None = None
    synths = [f"synth@{host}" for host in ("h2", "h3")]
    stale = {w: rabbit_farm.tasks_held(w) for w in synths}  # of killed incarnations: never finished
    try:
        with sessions() as session:
            owner = create_account(session=session, name=f"farm-books-{uuid.uuid4().hex[:6]}").id
        for number in range(FAIR_BOOKS):
            # Each book its own words: the same text would be reused from the account's chunk cache.
            words = excerpt(1200).replace(". ", f". In book {number}, ")
            books.append(submit(factory, objects, f"Book {number}. " + words, fmt="wav", account="", owner=owner))
            dispatcher.send_all(lifecycle.plan(sessions=sessions, objects=objects, job_id=books[-1],
                                               batch_chars=int(SMALL_BATCHES["LECTOR_JOB_BATCH_CHARS"]), window=1).messages)
        clock = text("SELECT clock_timestamp()")
        wait_for(lambda: sum(job_row(factory, b).chunks_done for b in books) > 0, 120,
                 lambda: f"no book made progress\n{rabbit_farm.tail()}")
        short = submit(factory, objects, "A short job. It ends here.", fmt="wav", account="farm-short")
        with engine.connect() as conn:
            submitted_at = conn.execute(clock).scalar_one()
        dispatcher.send(TASK_PLAN, str(short))
        started = time.monotonic()
        row = wait_for(lambda: (r := job_row(factory, short)).is_terminal and r, 240,
                       lambda: f"the short job did not end\n{rabbit_farm.tail()}", poll_s=0.1)
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
        first_s = (first_done - submitted_at).total_seconds()
        print(f"\nfarm rabbitmq fair share: the short job waited {waited} batches of {FAIR_BOOKS} running books "  # noqa: T201
              f"(backlog {backlog} chunks), first chunk after {first_s:.1f} s, done after {ended_s:.1f} s")
        assert running == FAIR_BOOKS, "the books ended before the short job: nothing was measured"
        assert waited <= FAIR_BOOKS + 2  # one batch per running book, and what the two hosts held
        assert backlog > 2 * FAIR_BOOKS  # ...when the books had far more queued up behind
    finally:
        with sessions() as session:
            for book in books if owner is not None else []:
                lifecycle.cancel(session=session, job_id=book, account_id=owner)
        wait_for(lambda: not any(rabbit_farm.tasks_held(w) - stale[w] for w in synths), 120,
                 lambda: f"the canceled books' batches did not drain\n{rabbit_farm.tail()}")
        engine.dispose()

