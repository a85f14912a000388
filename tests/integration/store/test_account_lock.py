"""The account row's lock (``batches.lock_account``, and the one ``jobs.unfinished_jobs`` counts
under) against the rows that reference the account.

A synth task's last transaction remembers its chunks in the account's cache and bills them (rows
whose foreign key takes a KEY SHARE lock on the account), then hands out the account's next
batches under the account's lock. Taken ``FOR UPDATE``, that lock waited on every other task's
KEY SHARE, and two tasks of one account deadlocked: each held a KEY SHARE the other's FOR UPDATE
waited on (seen on the farm: ``deadlock detected ... while locking tuple (0,1) in relation
"accounts"``, the batches retried and the books stalled). ``FOR NO KEY UPDATE`` still makes
hand-outs and submissions take turns, and lets foreign keys through."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from store.db import accounts, batches
from store.db import chunk_cache as cache_repo
from store.db import jobs as job_repo
from store.db.session import make_engine, make_sessionmaker

pytestmark = pytest.mark.integration


def test_a_hand_out_lock_waits_for_no_other_transactions_rows_of_the_account(pg_url: str) -> None:
    engine = make_engine(pg_url)
    sessions = make_sessionmaker(engine)
    try:
        with sessions() as session, session.begin():
            account = accounts.create_account(session=session, name="lock-order").id
        first, second = sessions(), sessions()
        try:
            first.begin()
            second.begin()
            for session, key in ((first, "a" * 64), (second, "b" * 64)):  # each holds a KEY SHARE on the account
                session.execute(text("SET LOCAL lock_timeout = '3s'"))
                cache_repo.remember(session=session, account_id=account,
                                    entries=[cache_repo.CachedChunk(key, f"cache/{key}.pcm", 10, 1.0)])
            try:
                batches.lock_account(session=first, account_id=account)  # must not wait for the second
                job_repo.unfinished_jobs(session=first, account_id=account)  # the submissions' lock, likewise
            except OperationalError as exc:  # lock_timeout: the lock waited on the other's KEY SHARE
                pytest.fail(f"the account's lock waited on another transaction's foreign key: {exc.orig}")
            with pytest.raises(OperationalError, match="lock timeout"):  # hand-outs still take turns
                batches.lock_account(session=second, account_id=account)
        finally:
            first.rollback()
            second.rollback()
            first.close()
            second.close()
    finally:
        engine.dispose()


def test_a_deadlock_reaches_the_caller_as_a_conflict_to_run_again(pg_url: str) -> None:
    """Two units of work that lock two accounts in opposite orders: PostgreSQL aborts one of them,
    and ``session_scope`` hands it on as ``TransactionConflict``, which the workers retry
    (``workers.tasks.TRANSIENT``) instead of failing the job."""
    import threading

    from store.db.session import session_scope
    from store.errors import TransactionConflict
    from workers.tasks import TRANSIENT

    engine = make_engine(pg_url)
    sessions = make_sessionmaker(engine)
    try:
        with session_scope(sessions) as session:
            ids = [accounts.create_account(session=session, name=f"deadlock-{n}").id for n in range(2)]
        both_hold = threading.Barrier(2, timeout=10)
        raised: list[BaseException] = []

        def cross(first: int) -> None:
            try:
                with session_scope(sessions) as session:
                    batches.lock_account(session=session, account_id=ids[first])
                    both_hold.wait()
                    batches.lock_account(session=session, account_id=ids[1 - first])
            except BaseException as exc:  # noqa: BLE001 - what the unit of work raised is the subject
                raised.append(exc)

        threads = [threading.Thread(target=cross, args=(n,)) for n in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert len(raised) == 1 and isinstance(raised[0], TransactionConflict), raised
        assert "deadlock detected" in str(raised[0])
        assert isinstance(raised[0], TRANSIENT)
    finally:
        engine.dispose()
