"""A large job must not starve small ones: a small job submitted just after a big one finishes
first, because each job keeps only a window of batches on the queue (here batches of 300
characters, a window of one, one worker serving both queues on a Redis database of its own)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from scheduler.queue import TASK_PLAN, Dispatcher, make_celery
from store.db import accounts
from store.db import jobs as job_repo
from store.db.session import make_engine, make_sessionmaker, session_scope
from tests.fixtures.stack import Stack
from tests.support.books import job_row, s3_store, submit

pytestmark = [pytest.mark.integration, pytest.mark.slow]
SENTENCE = "The long road wound through the quiet valley towards the distant town. "


@pytest.fixture
def fair_stack(stack_env: dict[str, str], spare_redis_url: str, tmp_path: Path) -> Iterator[Stack]:
    url = spare_redis_url
    env = {**stack_env, "LECTOR_REDIS_URL": url, "LECTOR_JOB_BATCH_CHARS": "300", "LECTOR_ACCOUNT_BATCH_WINDOW": "1",
           # the live playlist's segment tasks share this one worker's cpu queue: off, so the test
           # weighs the synth queue's fairness alone (the playlist has tests of its own)
           "LECTOR_LIVE_PLAYLIST": "false"}
    fair = Stack(env=env, logs=tmp_path)
    yield fair
    fair.stop_all()


def test_a_small_job_submitted_after_a_big_one_finishes_first(fair_stack: Stack, pg_url: str) -> None:
    env = fair_stack.env
    engine = make_engine(pg_url)
    sessions = make_sessionmaker(engine)
    objects = s3_store(env)
    # ~2,000 characters: 7 batches of 300; each paragraph its own words (the same paragraph twice
    # would be rendered once and reused, the account's chunk cache at work, not the queue's fairness)
    big_text = "\n\n".join(f"Part {i}. " + SENTENCE * 2 for i in range(14))
    with session_scope(sessions) as session:
        owner = accounts.create_account(session=session, name=f"fair-{uuid.uuid4().hex[:6]}").id
    big_id = submit(sessions, objects, big_text, fmt="wav", account="fair", owner=owner)
    small_id = submit(sessions, objects, "A small job.", fmt="wav", account="fair", owner=owner)
    dispatcher = Dispatcher(make_celery(env["LECTOR_REDIS_URL"]))
    dispatcher.send(TASK_PLAN, str(big_id))
    dispatcher.send(TASK_PLAN, str(small_id))
    fair_stack.start_worker("fair")  # both plans are queued before any work starts
    try:
        deadline = time.monotonic() + 300
        while not all(job_row(sessions, j).is_terminal for j in (big_id, small_id)):
            assert time.monotonic() < deadline, fair_stack.log_text("fair")[-3000:]
            time.sleep(0.5)
        big_job, small_job = job_row(sessions, big_id), job_row(sessions, small_id)
        assert big_job.status == small_job.status == "succeeded"
        assert big_job.chunks_total >= 7
        assert small_job.finished_at < big_job.finished_at
        # ...and not merely by a hair: the big job still had most of its work ahead of it.
        with session_scope(sessions) as session:
            done_before_small = sum(
                1 for c in job_repo.list_chunks(session=session, job_id=big_id) if c.updated_at <= small_job.finished_at
            )
        assert done_before_small <= big_job.chunks_total // 2
    finally:
        engine.dispose()
