"""The job lifecycle, in one place: every step's entry and every "what runs next" decision.

A job moves ``queued -> planning -> running -> assembling -> succeeded`` (or ``failed`` /
``canceled`` from any state before the end), and each end is announced by a webhook. The moves
a job may make are one table (``store.status.TRANSITIONS``), enforced by the one function that
writes a status (``store.db.jobs.set_job_status``): a step asks for the status it needs and the
table decides whether the job may go there. The steps themselves live in their own modules
(``planning``, ``synthesis``, ``assembly``, ``delivery``, ``reaper``); this module calls them,
decides which task follows, and returns that decision as ``Message`` values. The adapters (the Celery tasks, the jobs route) send them only after the
transaction that decided them has committed, so a message never names a row a rollback removed,
and the lifecycle can be tested without Celery or a broker.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Generic, TypeVar

from sqlalchemy.orm import Session

from books import parallel
from scheduler import (
    assembly,
    delivery,
    fair_share,
    hls,
    intake,
    planning,
    progressive_assembly,
    qa,
    reaper,
    synthesis,
    webhooks,
)
from scheduler.errors import job_error
from scheduler.fair_share import Handout
from scheduler.job_params import JobParams
from scheduler.queue import (
    TASK_ASSEMBLE,
    TASK_ASSEMBLE_AHEAD,
    TASK_HLS,
    TASK_PLAN,
    TASK_QA_CHECK,
    TASK_QA_REDO,
    TASK_SYNTHESIZE,
    TASK_WEBHOOK,
    Message,
)
from speech.asr import Recognizer
from speech.synthesizer import BatchSynthesizer
from speech.voices.catalog import VoiceCatalog
from store.db import jobs as job_repo
from store.db.models import Job
from store.db.session import SessionFactory
from store.errors import JobNotFound
from store.objects.base import ObjectStore
from store.status import JobStatus

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Step(Generic[T]):
    """What a step did (``value``, the task's return) and the messages to send after it."""

    value: T
    messages: list[Message] = field(default_factory=list)


def announce(job_id: uuid.UUID | str, attempt: int = 1, *, countdown: float | None = None) -> Message:
    """The webhook for a job that just ended (or the next attempt of one)."""
    return Message(TASK_WEBHOOK, (str(job_id), attempt), countdown)


# -- the facade's transitions: they run inside the route's transaction -------------------------


def submit(
    *,
    session: Session,
    objects: ObjectStore,
    account_id: uuid.UUID,
    spec: intake.JobSpec,
    idempotency_key: str | None,
    allow_private_webhooks: bool,
    max_active: int = 0,
) -> tuple[Job, bool, list[Message]]:
    """Create the job (or find the one this Idempotency-Key made); a new job is sent to planning."""
    job, created = intake.submit_job(
        session=session,
        objects=objects,
        account_id=account_id,
        spec=spec,
        idempotency_key=idempotency_key,
        allow_private_webhooks=allow_private_webhooks,
        max_active=max_active,
    )
    return job, created, [Message(TASK_PLAN, (str(job.id),))] if created else []


def cancel(
    *, session: Session, job_id: uuid.UUID, account_id: uuid.UUID, window: int
) -> tuple[Job, list[Message]]:
    """Cancel an account's job; a job that was still active is announced, and the places its
    batches held in the account's ``window`` go to the account's other jobs. Synthesis stops at
    its next check and no chunk finished after this is billed (``mark_chunk_done`` refuses them)."""
    job_repo.get_job(
        session=session, job_id=job_id, account_id=account_id
    )  # another account's job: not found
    moved = job_repo.set_job_status(session=session, job_id=job_id, status=JobStatus.CANCELED)
    job = job_repo.get_job(session=session, job_id=job_id, account_id=account_id)
    if not moved:
        return job, []
    return job, [announce(job_id), *synthesize_messages(fair_share.job_ended(session=session, account_id=account_id, window=window))]


# -- the workers' steps: each opens its own transactions ---------------------------------------


def fail(*, sessions: SessionFactory, job_id: uuid.UUID, error: BaseException, window: int) -> list[Message]:
    """A step gave up with an error that retrying will not cure: the job fails and is announced,
    and the places its batches held in its account's ``window`` go to the account's other jobs.
    A job that no longer exists (a stale message after its rows were removed) has nothing to fail:
    raising here would only turn one task's failure into a second one in Celery's error handler."""
    try:
        with sessions() as session:
            failed = job_repo.set_job_status(
                session=session,
                job_id=job_id,
                status=JobStatus.FAILED,
                error=job_error(error),  # the customer's sentence; the exception is in the worker's log
            )
            account_id = job_repo.get_job(session=session, job_id=job_id, account_id=None).account_id
            following = fair_share.job_ended(session=session, account_id=account_id, window=window) if failed else []
    except JobNotFound:
        log.warning("job %s failed but no longer exists: nothing to record", job_id)
        return []
    return [announce(job_id), *synthesize_messages(following)] if failed else []


def plan(
    *, sessions: SessionFactory, objects: ObjectStore, job_id: uuid.UUID, batch_chars: int, window: int
) -> Step[int]:
    """Split the text into chunks; send the batches the account's ``window`` has room for, or
    straight to assembly when a resumed job has nothing left to synthesize."""
    with sessions() as session:
        batches = planning.plan_job(
            session=session, objects=objects, job_id=job_id, batch_chars=batch_chars, window=window
        )
        job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        checked, total = JobParams.from_stored(job.params).qa, job.chunks_total
        done = job.chunks_done >= total
    if done and checked:  # resumed with every chunk done: the check goes first
        check = Message(TASK_QA_CHECK, (str(job_id), list(range(total)), 1))
        return Step(len(batches), [check, *synthesize_messages(batches)])
    return Step(len(batches), after_plan(job_id, batches, done=done))


def after_plan(job_id: uuid.UUID, batches: list[Handout], *, done: bool) -> list[Message]:
    """``done``: the job has no chunk left to synthesize (a resumed job): assembly follows.
    ``batches`` may be other jobs' of the account, whose turn it was."""
    return ([Message(TASK_ASSEMBLE, (str(job_id),))] if done else []) + synthesize_messages(batches)


def synthesize_messages(batches: list[Handout]) -> list[Message]:
    return [Message(TASK_SYNTHESIZE, (str(b.job_id), list(b.indices))) for b in batches]


def synthesize(
    *,
    sessions: SessionFactory,
    objects: ObjectStore,
    synthesizer: BatchSynthesizer,
    catalog: VoiceCatalog,
    job_id: uuid.UUID,
    indices: list[int],
    group_chars: int,
    on_billed: Callable[[str, int], None] | None = None,
    assemble_ahead: bool = False,
    live: bool = False,
    window: int,
    send: Callable[[list[Message]], None] | None = None,
) -> Step[int]:
    """Synthesize one batch. The last one sends the job to assembly. Whatever the outcome, the
    batch leaves its account's ``window`` and hands on the account's next batch, of whichever job's
    turn it is (``scheduler.fair_share``); with ``assemble_ahead`` a batch of a running job lets assembly follow on the cpu queue (``scheduler.progressive_assembly``). With
    ``live``, the live playlist's segment maker (``scheduler.hls``) follows the chunks stored:
    through ``send`` after each engine call's commit (a batch holds several), else once after
    the batch. ``on_billed(model, characters)`` hears what the batch billed (the worker's metric)."""
    listen = [Message(TASK_HLS, (str(job_id),))]

    def stored() -> None:
        assert send is not None
        try:
            send(listen)
        except Exception:  # noqa: BLE001 - listening must never fail synthesis; assembly sends it again
            log.warning("job %s: the live playlist's maker could not be sent", job_id, exc_info=True)

    following: list[Handout] = []

    def ending(session: Session) -> None:  # in the batch's last transaction: one commit with its marks
        following.extend(fair_share.batch_ended(session=session, job_id=job_id, indices=indices, window=window))

    result = synthesis.synthesize_batch(
        sessions=sessions,
        objects=objects,
        synthesizer=synthesizer,
        catalog=catalog,
        job_id=job_id,
        indices=indices,
        group_chars=group_chars,
        on_stored=stored if live and send is not None else None,
        ending=ending,
    )
    if on_billed is not None and result.billed:
        on_billed(result.model, result.billed)
    return Step(
        result.synthesized,
        after_batch(
            job_id, result, following, assemble_ahead=assemble_ahead, indices=indices, live=live and send is None
        ),
    )


def after_batch(
    job_id: uuid.UUID,
    result: synthesis.BatchResult,
    following: list[Handout],
    *,
    assemble_ahead: bool = False,
    indices: list[int] | None = None,
    live: bool = False,
) -> list[Message]:
    """What follows a batch: this job's next step, and ``following`` (the account's batches
    handed on, this job's or another's) whatever became of this one."""
    listen = [Message(TASK_HLS, (str(job_id),))] if live and result.synthesized and not result.canceled else []
    handed = synthesize_messages(following)
    if result.qa and not result.canceled:
        # The check hears this batch on the cpu queue; its last verdict sends the job to assembly.
        return [Message(TASK_QA_CHECK, (str(job_id), list(indices or []), 1)), *handed, *listen]
    if result.complete:
        return [Message(TASK_ASSEMBLE, (str(job_id),)), *handed, *listen]
    if assemble_ahead and result.chapter_scope and result.synthesized and not result.canceled:
        handed.append(Message(TASK_ASSEMBLE_AHEAD, (str(job_id),)))
    return handed + listen


def qa_check(
    *, sessions: SessionFactory, objects: ObjectStore, recognizer: Recognizer, job_id: uuid.UUID, indices: list[int], attempt: int
) -> Step[int]:
    """Hear a batch's chunks (``scheduler.qa``): failures go back to the synth queue once; when
    every chunk of the job has its final verdict, the report is written and assembly follows."""
    result = qa.check_chunks(
        sessions=sessions, objects=objects, recognizer=recognizer, job_id=job_id, indices=indices, attempt=attempt
    )
    if result.canceled:
        return Step(0)
    messages = [Message(TASK_QA_REDO, (str(job_id), result.redo))] if result.redo else []
    if qa.finish(sessions=sessions, objects=objects, job_id=job_id):
        messages.append(Message(TASK_ASSEMBLE, (str(job_id),)))
    return Step(result.heard, messages)


def qa_redo(*, sessions: SessionFactory, objects: ObjectStore, synthesizer: BatchSynthesizer, catalog: VoiceCatalog, job_id: uuid.UUID, indices: list[int]) -> Step[int]:
    """Render the failed chunks again (not billed), then hear them a second and last time."""
    done = qa.redo_chunks(
        sessions=sessions, objects=objects, synthesizer=synthesizer, catalog=catalog, job_id=job_id, indices=indices
    )
    return Step(len(done), [Message(TASK_QA_CHECK, (str(job_id), indices, 2))])


def assemble(
    *, sessions: SessionFactory, objects: ObjectStore, job_id: uuid.UUID, workers: int | None, live: bool = False
) -> Step[bool]:
    """Join the chunks into the book; the call that moved the job to ``succeeded`` announces it
    and, with ``live``, has the live playlist finished (a resumed job's last batch may have run
    before a restart, and the maker does nothing when it is complete)."""
    done = assembly.assemble_job(sessions=sessions, objects=objects, job_id=job_id, workers=workers)
    listen = [Message(TASK_HLS, (str(job_id),))] if done and live else []
    return Step(done, [announce(job_id)] + listen if done else [])


def hls_segments(*, sessions: SessionFactory, objects: ObjectStore, job_id: uuid.UUID) -> Step[int]:
    """The live playlist's segments that the done chunks allow (``scheduler.hls``); no
    transition, nothing to send."""
    return Step(hls.advance_stream(sessions=sessions, objects=objects, job_id=job_id))


def assemble_ahead(
    *, sessions: SessionFactory, objects: ObjectStore, job_id: uuid.UUID, workers: int | None
) -> Step[int]:
    """Assembly's share that a running job's done chunks allow (chapter scope): no transition,
    nothing to send; the last batch's ``assemble`` finds this work stored and does the rest."""
    measured = progressive_assembly.advance_job(
        sessions=sessions, objects=objects, job_id=job_id, workers=workers or parallel.default_workers(),
        out_rate=assembly.DEFAULT_RATE, target_lufs=assembly.TARGET_LUFS,
    )
    return Step(measured)


def deliver_webhook(
    *,
    sessions: SessionFactory,
    objects: ObjectStore,
    job_id: uuid.UUID,
    attempt: int,
    presign_seconds: int,
    allow_private: bool,
    timeout_s: float,
    visibility_timeout_s: int,
) -> Step[bool]:
    """One callback attempt; a failed one schedules the next, with backoff, while the window lasts."""
    outcome = delivery.deliver(
        sessions=sessions,
        job_id=job_id,
        attempt=attempt,
        audio_url=lambda job: delivery.result_link(objects, job, expires_s=presign_seconds),
        qa_report=lambda job: qa.report(objects, job),
        allow_private=allow_private,
        timeout_s=timeout_s,
        max_delay_s=webhooks.delay_cap(visibility_timeout_s),
    )
    retry = (
        [] if outcome.retry_in_s is None else [announce(job_id, attempt + 1, countdown=outcome.retry_in_s)]
    )
    return Step(outcome.delivered, retry)


def reap(*, sessions: SessionFactory, stall_after_s: float, visibility_timeout_s: int) -> Step[int]:
    """Re-send the next step of every stalled job and every overdue webhook attempt."""
    stall_after = timedelta(seconds=stall_after_s)
    with sessions() as session:
        actions = reaper.stalled(session=session, stall_after=stall_after)
        callbacks = reaper.lost_webhooks(
            session=session,
            stall_after=stall_after,
            max_delay_s=webhooks.delay_cap(visibility_timeout_s),
        )
    messages = [Message(task, (job_id,)) for task, job_id in actions]
    messages += [announce(job_id, attempt) for job_id, attempt in callbacks]
    return Step(len(messages), messages)
