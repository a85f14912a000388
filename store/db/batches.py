"""A job's planned batches as rows: the fair share between accounts counts and picks from them.

A batch is ``waiting`` until it is handed to the synth queue (``sent``: in flight, it occupies
one place of its account's window) and ``done`` when its task ended. ``next_waiting`` and
``finish`` run under the account's row lock (``lock_account``, the lock submissions count jobs
under), so two workers finishing batches of one account at once count and pick one after the
other: neither sends past the window, and neither leaves a place unfilled. The turn's order
(the job served least recently first) is ``next_waiting``'s query; the window, and when to hand
out, are the scheduler's (``scheduler.fair_share``). Nothing here commits.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from sqlalchemy import exists, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, aliased

from store.db.models import Account, Job, JobBatch
from store.status import BatchState, JobStatus


def add_batches(
    *, session: Session, job_id: uuid.UUID, batches: Sequence[Sequence[int]], pending: AbstractSet[int], sent: int = 0,
) -> None:
    """Store the job's batches in dispatch order; rows that exist are kept (a repeated plan
    changes nothing). A batch with no ``pending`` chunk is stored ``done`` (a resumed job), and
    the first ``sent`` ones still pending as ``sent`` (a job handed out before these rows existed)."""
    if not batches:
        return
    rows = []
    for number, indices in enumerate(batches):
        todo = not pending.isdisjoint(indices)
        state = BatchState.DONE if not todo else BatchState.SENT if number < sent else BatchState.WAITING
        rows.append({"job_id": job_id, "number": number, "indices": [int(i) for i in indices], "state": state.value})
    session.execute(insert(JobBatch).on_conflict_do_nothing(index_elements=[JobBatch.job_id, JobBatch.number]), rows)


def lock_account(*, session: Session, account_id: uuid.UUID) -> None:
    """Hold the account's row until the transaction ends: hand-outs of one account take turns."""
    # FOR NO KEY UPDATE: it excludes its own kind, and not the KEY SHARE that a foreign key to the
    # account takes (usage and chunk cache rows written earlier in a task's transaction). FOR
    # UPDATE waited on those, and two tasks of one account deadlocked (tests/integration/store/test_account_lock.py).
    session.execute(select(Account.id).where(Account.id == account_id).with_for_update(key_share=True))


def in_flight(*, session: Session, account_id: uuid.UUID) -> int:
    """The account's batches on the synth queue or being synthesized (of its running jobs: an
    ended job's leftover tasks find it ended and take no place)."""
    return int(
        session.scalar(
            select(func.count())
            .select_from(JobBatch)
            .join(Job, Job.id == JobBatch.job_id)
            .where(Job.account_id == account_id, Job.status == JobStatus.RUNNING, JobBatch.state == BatchState.SENT)
        )
        or 0
    )


def next_waiting(*, session: Session, account_id: uuid.UUID) -> tuple[uuid.UUID, list[int]] | None:
    """Mark sent, and return, the first waiting batch of the account's running job served least
    recently (never served first; then the oldest job): a round robin between its jobs."""
    batch = aliased(JobBatch)
    waiting = aliased(JobBatch)
    served = select(func.max(batch.sent_at)).where(batch.job_id == Job.id).correlate(Job).scalar_subquery()
    first = (
        select(func.min(waiting.number))
        .where(waiting.job_id == Job.id, waiting.state == BatchState.WAITING)
        .correlate(Job)
        .scalar_subquery()
    )
    has_waiting = exists().where(waiting.job_id == Job.id, waiting.state == BatchState.WAITING)
    pick = session.execute(
        select(Job.id, first)
        .where(Job.account_id == account_id, Job.status == JobStatus.RUNNING, has_waiting)
        .order_by(served.asc().nulls_first(), Job.created_at, Job.id)
        .limit(1)
    ).first()
    if pick is None:
        return None
    job_id, number = pick
    indices = session.scalar(
        update(JobBatch)
        .where(JobBatch.job_id == job_id, JobBatch.number == number, JobBatch.state == BatchState.WAITING)
        .values(state=BatchState.SENT, sent_at=func.clock_timestamp())  # several picks in one transaction differ
        .returning(JobBatch.indices)
        .execution_options(synchronize_session=False)
    )
    return None if indices is None else (job_id, list(indices))  # None: taken meanwhile, outside the lock


def finish(*, session: Session, job_id: uuid.UUID, indices: Sequence[int]) -> bool:
    """The task of the job's batch of ``indices`` ended: it leaves the window. False when no
    such batch was in flight (a twin task's second end, a batch of a plan without rows)."""
    done = session.execute(
        update(JobBatch)
        .where(JobBatch.job_id == job_id, JobBatch.indices == [int(i) for i in indices], JobBatch.state != BatchState.DONE)
        .values(state=BatchState.DONE)
        .returning(JobBatch.number)
        .execution_options(synchronize_session=False)
    ).first()
    return done is not None


def unfinished(*, session: Session, job_id: uuid.UUID, pending: AbstractSet[int]) -> list[list[int]]:
    """The job's batches handed out whose chunks are not all done, in order, marked sent again:
    what a resumed plan sends again. Their message may be lost (a Redis restart, a crash between
    the commit that sent them and the send), or their task ended without doing them."""
    rows = session.execute(
        select(JobBatch.number, JobBatch.state, JobBatch.indices)
        .where(JobBatch.job_id == job_id, JobBatch.state != BatchState.WAITING)
        .order_by(JobBatch.number)
    ).all()
    again = [(number, state, list(indices)) for number, state, indices in rows if not pending.isdisjoint(indices)]
    reopened = [number for number, state, _ in again if state == BatchState.DONE]
    if reopened:
        session.execute(
            update(JobBatch)
            .where(JobBatch.job_id == job_id, JobBatch.number.in_(reopened))
            .values(state=BatchState.SENT)
            .execution_options(synchronize_session=False)
        )
    return [indices for _, _, indices in again]
