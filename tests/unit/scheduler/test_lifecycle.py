"""scheduler/lifecycle.py's decisions, without Celery, a broker or a database: what follows a
plan and a finished batch, and how a job's end is announced."""

from __future__ import annotations

import uuid

from scheduler import lifecycle
from scheduler.fair_share import Handout
from scheduler.queue import TASK_ASSEMBLE, TASK_ASSEMBLE_AHEAD, TASK_SYNTHESIZE, TASK_WEBHOOK, Message
from scheduler.synthesis import BatchResult

JOB = uuid.uuid4()
OTHER = uuid.uuid4()  # another job of the account, whose turn it is


def mine(*batches: list[int]) -> list[Handout]:
    return [Handout(JOB, b) for b in batches]


def test_a_plan_sends_each_batch_handed_out_and_to_assembly_when_nothing_is_left() -> None:
    assert lifecycle.after_plan(JOB, [Handout(JOB, [0, 1]), Handout(OTHER, [2])], done=False) == [
        Message(TASK_SYNTHESIZE, (str(JOB), [0, 1])),
        Message(TASK_SYNTHESIZE, (str(OTHER), [2])),
    ]
    assert lifecycle.after_plan(JOB, [], done=False) == []  # the account's window is full: its turn comes
    assert lifecycle.after_plan(JOB, [], done=True) == [Message(TASK_ASSEMBLE, (str(JOB),))]


def test_the_last_batch_assembles_and_every_batch_hands_on_what_its_account_was_given() -> None:
    assert lifecycle.after_batch(JOB, BatchResult(3, complete=True), []) == [
        Message(TASK_ASSEMBLE, (str(JOB),))
    ]
    assert lifecycle.after_batch(JOB, BatchResult(3, complete=True), [Handout(OTHER, [1])]) == [
        Message(TASK_ASSEMBLE, (str(JOB),)), Message(TASK_SYNTHESIZE, (str(OTHER), [1])),
    ]
    # A canceled job's batch frees its place too: the account's other job is handed on.
    assert lifecycle.after_batch(JOB, BatchResult(1, complete=False, canceled=True), [Handout(OTHER, [7])]) == [
        Message(TASK_SYNTHESIZE, (str(OTHER), [7])),
    ]
    assert lifecycle.after_batch(JOB, BatchResult(2, complete=False), mine([4, 5])) == [
        Message(TASK_SYNTHESIZE, (str(JOB), [4, 5])),
    ]
    assert lifecycle.after_batch(JOB, BatchResult(2, complete=False), []) == []  # others are still queued


def test_with_assembly_ahead_a_chapter_scope_batch_that_did_something_lets_assembly_follow() -> None:
    ahead = {"assemble_ahead": True}
    assert lifecycle.after_batch(JOB, BatchResult(2, complete=False, chapter_scope=True), mine([4, 5]), **ahead) == [
        Message(TASK_SYNTHESIZE, (str(JOB), [4, 5])),
        Message(TASK_ASSEMBLE_AHEAD, (str(JOB),)),
    ]
    assert lifecycle.after_batch(JOB, BatchResult(2, complete=False), mine([4]), **ahead) == [  # book scope
        Message(TASK_SYNTHESIZE, (str(JOB), [4])),
    ]
    assert lifecycle.after_batch(JOB, BatchResult(2, complete=False, chapter_scope=True), mine([4])) == [  # setting off
        Message(TASK_SYNTHESIZE, (str(JOB), [4])),
    ]
    nothing_new = BatchResult(0, complete=False, chapter_scope=True)
    assert lifecycle.after_batch(JOB, nothing_new, [], **ahead) == []
    assert lifecycle.after_batch(JOB, BatchResult(1, complete=False, canceled=True), [], **ahead) == []
    assert lifecycle.after_batch(JOB, BatchResult(3, complete=True), [], **ahead) == [Message(TASK_ASSEMBLE, (str(JOB),))]


def test_with_the_live_playlist_every_batch_that_stored_chunks_sends_the_segment_maker() -> None:
    from scheduler.queue import QUEUE_LIVE, ROUTES, TASK_HLS

    listen = Message(TASK_HLS, (str(JOB),))
    assert ROUTES[TASK_HLS] == QUEUE_LIVE
    assert lifecycle.after_batch(JOB, BatchResult(2, complete=False), mine([4]), live=True) == [
        Message(TASK_SYNTHESIZE, (str(JOB), [4])), listen,
    ]
    assert lifecycle.after_batch(JOB, BatchResult(3, complete=True), [], live=True) == [
        Message(TASK_ASSEMBLE, (str(JOB),)), listen,
    ]
    assert listen in lifecycle.after_batch(JOB, BatchResult(2, complete=False, qa=True), [], live=True, indices=[0])
    assert lifecycle.after_batch(JOB, BatchResult(0, complete=False), [], live=True) == []  # nothing new
    assert lifecycle.after_batch(JOB, BatchResult(1, complete=False, canceled=True), [], live=True) == []
    assert lifecycle.after_batch(JOB, BatchResult(2, complete=False), [], live=False) == []  # setting off


def test_an_announcement_is_a_webhook_attempt_with_its_backoff() -> None:
    assert lifecycle.announce(JOB) == Message(TASK_WEBHOOK, (str(JOB), 1))
    assert lifecycle.announce(JOB, 3, countdown=40.0) == Message(TASK_WEBHOOK, (str(JOB), 3), 40.0)


def test_a_checked_job_hears_each_batch_on_the_cpu_queue_and_never_assembles_from_synthesis() -> None:
    """With ``qa``, the check's last verdict sends the job to assembly (``lifecycle.qa_check``),
    and a chapter-scope job does not assemble ahead of a chunk the check may render again."""
    from scheduler.queue import QUEUE_CPU, QUEUE_SYNTH, ROUTES, TASK_QA_CHECK, TASK_QA_REDO

    checked = BatchResult(3, complete=True, qa=True, chapter_scope=True)
    assert lifecycle.after_batch(JOB, checked, [], assemble_ahead=True, indices=[4, 5, 6]) == [
        Message(TASK_QA_CHECK, (str(JOB), [4, 5, 6], 1)),
    ]
    running = BatchResult(2, complete=False, qa=True, chapter_scope=True)
    assert lifecycle.after_batch(JOB, running, mine([8, 9]), assemble_ahead=True, indices=[6, 7]) == [
        Message(TASK_QA_CHECK, (str(JOB), [6, 7], 1)),
        Message(TASK_SYNTHESIZE, (str(JOB), [8, 9])),
    ]
    canceled = BatchResult(1, complete=False, canceled=True, qa=True)
    assert lifecycle.after_batch(JOB, canceled, [], indices=[6]) == []
    assert ROUTES[TASK_QA_CHECK] == QUEUE_CPU and ROUTES[TASK_QA_REDO] == QUEUE_SYNTH
