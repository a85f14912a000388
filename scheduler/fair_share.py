"""Fair share of the synth queue between accounts.

An account keeps at most ``window`` batches in flight (on the synth queue or being synthesized),
whatever its number of running jobs: an account with twenty books holds as many places in the
queue as an account with one, and another account's job waits behind at most ``window`` of
them (plus what the synth hosts already hold), not one batch per book. Inside the account its
running jobs take turns: each free place goes to the first waiting batch of the job served
least recently (a job never served first, then the oldest job).

Every change of room hands out: planning a job, a batch's task ending (whatever its outcome:
done, job complete, job canceled), a job failing or being canceled. Each does so under the
account's row lock in the same transaction that made the room (``store.db.batches``), and the
batches picked are sent after that commit. So two workers finishing at once neither over-send
nor leave a place unfilled; a job that has work while its account has room is never left with
nothing in flight.

A crash between that commit and the send leaves a batch marked sent that is on no queue. Its job
then makes no progress from it; when the job has been unchanged for ``LECTOR_STALL_AFTER_S`` the
reaper re-sends ``plan``, which sends again every batch of the job marked sent and not finished
(``store.db.batches.unfinished``) and fills the account's free places. Until then the lost batch
holds one place of its account's window. A batch that was merely slow and is sent again runs
twice; every step is idempotent, and its second end finds it finished and takes no second place.
"""

from __future__ import annotations

import uuid
from typing import NamedTuple

from sqlalchemy.orm import Session

from store.db import batches as batch_repo
from store.db import jobs as job_repo


class Handout(NamedTuple):
    """A batch to send to the synth queue: its job and its chunk indices."""

    job_id: uuid.UUID
    indices: list[int]


def hand_out(*, session: Session, account_id: uuid.UUID, window: int) -> list[Handout]:
    """Fill the account's free places in the window, its jobs in turn; mark them sent. The
    caller sends them after its commit."""
    batch_repo.lock_account(session=session, account_id=account_id)
    room = window - batch_repo.in_flight(session=session, account_id=account_id)
    handed: list[Handout] = []
    while len(handed) < room:
        picked = batch_repo.next_waiting(session=session, account_id=account_id)
        if picked is None:
            break
        handed.append(Handout(*picked))
    return handed


def batch_ended(*, session: Session, job_id: uuid.UUID, indices: list[int], window: int) -> list[Handout]:
    """A synthesize task of ``job_id`` ended: its batch leaves the window and the account's free
    places are filled (with this job's next batch or another job's, in turn)."""
    account_id = job_repo.get_job(session=session, job_id=job_id, account_id=None).account_id
    batch_repo.lock_account(session=session, account_id=account_id)  # before finishing: one at a time
    batch_repo.finish(session=session, job_id=job_id, indices=indices)
    return hand_out(session=session, account_id=account_id, window=window)


def job_ended(*, session: Session, account_id: uuid.UUID, window: int) -> list[Handout]:
    """A job of the account failed or was canceled: the places its batches held are free."""
    return hand_out(session=session, account_id=account_id, window=window)
