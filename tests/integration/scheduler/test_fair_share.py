"""The fair share between accounts (``scheduler.fair_share``) on the real PostgreSQL and a real
broker (a Redis database of the test's own): what the lifecycle sends lands on the broker's
queues, and a worker's loop run by hand takes it from there in order, as a worker would.

An account keeps at most its window of batches in flight whatever its number of books, its jobs
take turns, another account's job is queued behind at most that window, two workers finishing
at once neither over-send nor leave a place empty, and a batch lost between the commit that
handed it out and its send is brought back by the reaper.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from scheduler import lifecycle
from scheduler.fair_share import Handout, batch_ended
from scheduler.intake import JobSpec
from scheduler.queue import (
    QUEUE_CPU,
    QUEUE_SYNTH,
    TASK_ASSEMBLE,
    TASK_PLAN,
    TASK_SYNTHESIZE,
    Dispatcher,
    Message,
    make_celery,
)
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from store.db import batches as batch_repo
from store.db.accounts import create_account
from store.db.models import Job, JobBatch, JobChunk, Usage
from store.db.session import SessionFactory, make_sessionmaker, scoped_sessions
from store.objects.local import LocalObjectStore
from store.status import BatchState
from tests.fixtures.postgres import race_behind, race_together
from tests.support.fake_engine import ToneEngine

pytestmark = [pytest.mark.integration]

BATCH_CHARS = 300


def book(name: str, paragraphs: int = 10) -> str:
    """Paragraphs of about 140 characters, two to a 300-character batch; words of the book's own
    (the same text in two jobs would be reused from the account's chunk cache)."""
    return "\n\n".join(
        f"In {name}, part {n} begins. The road to the {name} valley wound past the mill and the old stone bridge "
        f"number {n}." for n in range(paragraphs)
    )


class Hand:
    """One worker, run by hand: it takes the oldest task of a queue on the real broker, runs its
    lifecycle step and sends what the step decided (the Celery task's work, without Celery)."""

    def __init__(self, broker_url: str, sessions: SessionFactory, objects: LocalObjectStore, window: int):
        self.dispatcher = Dispatcher(make_celery(broker_url))
        self.redis = redis.Redis.from_url(broker_url)
        self.sessions, self.objects, self.window = sessions, objects, window
        tone = ToneEngine()
        self.synthesizer, self.catalog = Synthesizer(lambda voice: tone), Catalog.load()

    def queued(self, queue: str) -> list[tuple[str, list[Any]]]:
        """(task, args) on ``queue``, oldest first (kombu pushes to the head, takes from the tail)."""
        return [self._decode(raw) for raw in reversed(list(self.redis.lrange(queue, 0, -1)))]

    def take(self, queue: str) -> tuple[str, list[Any]] | None:
        raw = self.redis.rpop(queue)
        return None if raw is None else self._decode(raw)  # type: ignore[arg-type]

    @staticmethod
    def _decode(raw: bytes | str) -> tuple[str, list[Any]]:
        message = json.loads(raw)
        args, _, _ = json.loads(base64.b64decode(message["body"]))
        return message["headers"]["task"], args

    def run(self, task: str, args: list[Any]) -> list[Message]:
        """The step's messages (not sent: the caller sends them, or drops them as a crash would)."""
        job_id = uuid.UUID(args[0])
        sessions, objects = self.sessions, self.objects
        if task == TASK_PLAN:
            return lifecycle.plan(sessions=sessions, objects=objects, job_id=job_id, batch_chars=BATCH_CHARS,
                                  window=self.window).messages
        if task == TASK_SYNTHESIZE:
            return lifecycle.synthesize(
                sessions=sessions, objects=objects, job_id=job_id, synthesizer=self.synthesizer, catalog=self.catalog,
                indices=list(args[1]), group_chars=BATCH_CHARS, window=self.window,
            ).messages
        if task == TASK_ASSEMBLE:
            return lifecycle.assemble(sessions=sessions, objects=objects, job_id=job_id, workers=1).messages
        return []  # webhooks (no URL here), assembly ahead, the live playlist: not this test's

    def step(self, queue: str) -> tuple[str, list[Any]] | None:
        """Take, run and send one task of ``queue``; None when it is empty."""
        taken = self.take(queue)
        if taken is not None:
            self.dispatcher.send_all(self.run(*taken))
        return taken

    def drain(self) -> None:
        while self.step(QUEUE_CPU) or self.step(QUEUE_SYNTH):
            pass


@pytest.fixture
def sessions(db_engine: Engine) -> SessionFactory:
    """Committed units of work, each on a connection of its own: as on several workers."""
    return scoped_sessions(make_sessionmaker(db_engine))


@pytest.fixture
def objects(tmp_path: Path) -> LocalObjectStore:
    return LocalObjectStore(tmp_path / "objects")


def _account(sessions: SessionFactory) -> uuid.UUID:
    with sessions() as session:
        return create_account(session=session, name=f"fair-{uuid.uuid4().hex[:8]}").id


def _submit(sessions: SessionFactory, objects: LocalObjectStore, account: uuid.UUID, text: str) -> uuid.UUID:
    with sessions() as session:
        job, _, _ = lifecycle.submit(
            session=session, objects=objects, account_id=account, idempotency_key=None, allow_private_webhooks=False,
            spec=JobSpec(text=text, speaker="joe", model_id="mistv3", lang="en", format="wav"),
        )
        return job.id


def _in_flight(sessions: SessionFactory, account: uuid.UUID) -> int:
    with sessions() as session:
        return batch_repo.in_flight(session=session, account_id=account)


def _billed_once(sessions: SessionFactory, jobs: list[uuid.UUID]) -> None:
    """Every job succeeded, and each of its chunks has exactly one usage row."""
    with sessions() as session:
        for job_id in jobs:
            job = session.get(Job, job_id)
            assert job is not None and job.status == "succeeded", (job_id, job and job.status)
            rows = session.scalars(select(Usage.chunk_index).where(Usage.job_id == job_id).order_by(Usage.chunk_index))
            assert list(rows) == list(range(job.chunks_total))


@pytest.fixture
def broker(spare_redis_url: str) -> Iterator[str]:
    yield spare_redis_url


def test_an_account_keeps_its_window_its_jobs_take_turns_and_another_account_waits_only_for_that(
    sessions: SessionFactory, objects: LocalObjectStore, broker: str,
) -> None:
    window = 2
    hand = Hand(broker, sessions, objects, window)
    many = _account(sessions)
    books = [_submit(sessions, objects, many, book(f"Book{n}")) for n in range(3)]
    for job_id in books:
        hand.dispatcher.send(TASK_PLAN, str(job_id))
    while hand.step(QUEUE_CPU):
        pass
    synth = hand.queued(QUEUE_SYNTH)
    # Three books planned, but the account holds two places: both went to the first one planned.
    assert [uuid.UUID(args[0]) for _, args in synth] == [books[0], books[0]]
    assert _in_flight(sessions, many) == window

    # Another account's job is queued behind those two batches, not behind three books' windows.
    other = _submit(sessions, objects, _account(sessions), book("Elsewhere", paragraphs=2))
    hand.dispatcher.send(TASK_PLAN, str(other))
    hand.step(QUEUE_CPU)
    waiting = [uuid.UUID(args[0]) for _, args in hand.queued(QUEUE_SYNTH)]
    assert waiting.index(other) == window

    served: list[uuid.UUID] = []
    while (taken := hand.step(QUEUE_SYNTH)) is not None:
        served.append(uuid.UUID(taken[1][0]))
        mine = [args for _, args in hand.queued(QUEUE_SYNTH) if uuid.UUID(args[0]) in books]
        assert len(mine) <= window  # never more of the account's batches in flight than its window
        with sessions() as session:
            still = session.scalar(
                select(func.count()).select_from(JobBatch)
                .where(JobBatch.job_id.in_(books), JobBatch.state == BatchState.WAITING)
            )
        if still:
            assert len(mine) == window  # ...and never fewer while it has work waiting
        while hand.step(QUEUE_CPU):
            pass
    ours = [job for job in served if job in books]
    # Round robin, the least recently served first: after the first book's two, the others in turn.
    assert ours[:8] == [books[0], books[0], books[1], books[2], books[0], books[1], books[2], books[0]]
    assert served.index(other) == window
    _billed_once(sessions, [*books, other])


def test_workers_finishing_at_once_neither_over_send_nor_leave_a_place_empty(
    sessions: SessionFactory, objects: LocalObjectStore, db_engine: Engine,
) -> None:
    window = 3
    account = _account(sessions)
    jobs = [_submit(sessions, objects, account, book(f"Race{n}", paragraphs=16)) for n in range(2)]
    first: list[Handout] = []
    for job_id in jobs:
        planned = lifecycle.plan(sessions=sessions, objects=objects, job_id=job_id, batch_chars=BATCH_CHARS, window=window)
        first += [Handout(uuid.UUID(str(m.args[0])), list(m.args[1])) for m in planned.messages]  # type: ignore[call-overload]
    assert len(first) == window
    factory: sessionmaker[Session] = make_sessionmaker(db_engine)

    def ending(batch: Handout) -> Any:
        return lambda session: batch_ended(session=session, job_id=batch.job_id, indices=batch.indices, window=window)

    # Two at once, one behind the other's lock: the second counts after the first committed.
    one, two = race_behind(db_engine, factory, ending(first[0]), ending(first[1]))
    assert not isinstance(two, BaseException), two
    assert len(one) == len(two) == 1 and one != two
    assert _in_flight(sessions, account) == window

    # Free-running: three finishers released together each hand on exactly one, all different.
    in_flight = [first[2], *one, *two]
    outcomes = race_together(factory, 3, lambda session: ending(in_flight.pop())(session))
    assert not [o for o in outcomes if isinstance(o, BaseException)], outcomes
    handed = [h for outcome in outcomes for h in outcome]  # type: ignore[union-attr]
    assert len(handed) == 3
    assert len({(h.job_id, tuple(h.indices)) for h in handed}) == 3
    assert not {(h.job_id, tuple(h.indices)) for h in handed} & {(h.job_id, tuple(h.indices)) for h in first + one + two}
    assert _in_flight(sessions, account) == window
    # The turns held under the race: each job was handed on in turn, neither twice in a row.
    with sessions() as session:
        sent = session.execute(
            select(JobBatch.job_id).where(JobBatch.job_id.in_(jobs), JobBatch.sent_at.is_not(None))
            .order_by(JobBatch.sent_at)
        ).scalars().all()
    assert sent[:3] == [jobs[0], jobs[0], jobs[0]]  # the first job planned took the empty window
    assert sent[3:] == [jobs[1], jobs[0], jobs[1], jobs[0], jobs[1]]


def test_a_batch_lost_between_the_commit_and_the_send_is_sent_again_by_the_reaper(
    sessions: SessionFactory, objects: LocalObjectStore, broker: str,
) -> None:
    """A worker commits its batch's end (the next batch marked sent) and dies before sending:
    the account's one place is held by a batch no queue has, so its next job gets nothing. The
    reaper finds the jobs unchanged, their plan sends the lost batch again, and both books end
    with every chunk billed once."""
    hand = Hand(broker, sessions, objects, window=1)
    account = _account(sessions)
    lost_job = _submit(sessions, objects, account, book("Lost", paragraphs=6))
    hand.dispatcher.send(TASK_PLAN, str(lost_job))
    hand.step(QUEUE_CPU)
    task, args = hand.take(QUEUE_SYNTH) or ("", [])
    assert task == TASK_SYNTHESIZE
    dropped = hand.run(task, args)  # ...and the worker dies before sending these
    lost = [m for m in dropped if m.task == TASK_SYNTHESIZE]
    assert len(lost) == 1 and lost[0].args[0] == str(lost_job)
    later = _submit(sessions, objects, account, book("Later", paragraphs=2))
    hand.dispatcher.send(TASK_PLAN, str(later))
    hand.step(QUEUE_CPU)
    assert hand.queued(QUEUE_SYNTH) == []  # the lost batch holds the account's place: nothing moves
    assert _in_flight(sessions, account) == 1

    reaped = lifecycle.reap(sessions=sessions, stall_after_s=0, visibility_timeout_s=1800)
    ours = [m for m in reaped.messages if m.args and m.args[0] in (str(lost_job), str(later))]  # others: other tests'
    assert sorted(m.task for m in ours) == [TASK_PLAN, TASK_PLAN]
    hand.dispatcher.send_all(ours)
    while hand.step(QUEUE_CPU):
        pass
    assert [(t, a[0], a[1]) for t, a in hand.queued(QUEUE_SYNTH)] == [(TASK_SYNTHESIZE, str(lost_job), lost[0].args[1])]
    hand.drain()
    _billed_once(sessions, [lost_job, later])
    with sessions() as session:
        pending = session.scalar(
            select(func.count()).select_from(JobChunk).where(JobChunk.job_id.in_([lost_job, later]), JobChunk.status != "done")
        )
    assert pending == 0
