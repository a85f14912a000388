"""Batch jobs, their chunks and their webhook attempts.

Every write here is safe to repeat, because every Celery task may run twice: ``create_job``
honours the Idempotency-Key with one ``INSERT ... ON CONFLICT``, ``add_chunks`` skips chunks that
exist, ``mark_chunk_done`` counts a chunk once (the row lock taken by its guarded UPDATE makes a
concurrent second call wait and then find the chunk done), and ``set_job_status`` can be made a
compare-and-set guarded by ``store.status.TRANSITIONS``. ``set_job_status`` is the one
function that writes a job's status. Nothing here commits.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, Integer, Table, bindparam, func, literal, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from store.db.batches import lock_account
from store.db.models import JOB_STATUSES, Job, JobChunk, WebhookAttempt
from store.errors import IdempotencyConflict, InvalidArgument, JobNotFound
from store.status import STARTED, TERMINAL, ChunkStatus, IllegalTransition, JobStatus, sources


def unfinished_jobs(*, session: Session, account_id: uuid.UUID) -> int:
    """How many of an account's jobs have not ended, counted under a lock on the account's row:
    two submissions at once count one after the other, so a limit holds exactly."""
    lock_account(session=session, account_id=account_id)  # the hand-outs' lock: they take turns too
    return int(
        session.scalar(
            select(func.count()).select_from(Job).where(Job.account_id == account_id, Job.status.not_in(sorted(TERMINAL)))
        )
        or 0
    )


def create_job(
    *,
    session: Session,
    account_id: uuid.UUID,
    request_hash: str,
    params: Mapping[str, object],
    characters: int,
    text_key: str | None = None,
    idempotency_key: str | None = None,
    webhook_url: str | None = None,
    job_id: uuid.UUID | None = None,
) -> tuple[Job, bool]:
    """Create a queued job; return ``(job, created)``.

    With an ``idempotency_key`` already used by this account, return the existing job and
    ``created=False`` when ``request_hash`` matches, and raise ``IdempotencyConflict`` when it does
    not. Two concurrent submissions with the same key resolve to one job: the second insert waits
    for the first transaction and then finds its row. ``job_id`` lets the caller choose the id
    (to derive object keys before the row exists); on ``created=False`` it was not used.
    """
    statement = insert(Job).values(
        id=job_id or uuid.uuid4(),
        account_id=account_id,
        status=JobStatus.QUEUED,
        idempotency_key=idempotency_key,
        request_hash=request_hash,
        params=params,
        text_key=text_key,
        characters=characters,
        webhook_url=webhook_url,
    )
    if idempotency_key is not None:
        statement = statement.on_conflict_do_nothing(index_elements=[Job.account_id, Job.idempotency_key])
    new_id = session.execute(statement.returning(Job.id)).scalar_one_or_none()
    if new_id is not None:
        job = session.get(Job, new_id)
        assert job is not None
        return job, True
    existing = session.scalars(
        select(Job).where(Job.account_id == account_id, Job.idempotency_key == idempotency_key)
    ).one()
    if existing.request_hash != request_hash:
        raise IdempotencyConflict(f"idempotency key {idempotency_key!r} was used with a different request")
    return existing, False


def get_job(*, session: Session, job_id: uuid.UUID, account_id: uuid.UUID | None) -> Job:
    """The job, seen from ``account_id``: another account's job is ``JobNotFound`` (not "forbidden",
    which would confirm that it exists). Pass ``account_id=None`` only from internal code (tasks)."""
    query = select(Job).where(Job.id == job_id)
    if account_id is not None:
        query = query.where(Job.account_id == account_id)
    job = session.scalar(query)
    if job is None:
        raise JobNotFound(f"no job {job_id}")
    return job


def list_jobs(
    *,
    session: Session,
    account_id: uuid.UUID,
    limit: int = 50,
    offset: int = 0,
    status: JobStatus | str | None = None,
) -> list[Job]:
    """An account's jobs, newest first. Raises ``InvalidArgument`` for a status jobs never have
    (the customer's query string arrives here as it was typed)."""
    query = select(Job).where(Job.account_id == account_id)
    if status is not None:
        if status not in JOB_STATUSES:
            raise InvalidArgument(f"status must be one of {', '.join(JOB_STATUSES)}")
        query = query.where(Job.status == JobStatus(status))
    query = query.order_by(Job.created_at.desc(), Job.id.desc()).limit(limit).offset(offset)
    return list(session.scalars(query))


def set_job_status(
    *,
    session: Session,
    job_id: uuid.UUID,
    status: JobStatus,
    expected: Collection[JobStatus] | None = None,
    error: str | None = None,
    result_key: str | None = None,
    result_content_type: str | None = None,
    audio_seconds: float | None = None,
) -> bool:
    """Move a job to ``status`` and return True, only from a status the transitions table allows
    (``store.status.TRANSITIONS``); return False when the job is elsewhere (a repeat of a task
    that already moved it, a canceled job). ``expected`` narrows the table's sources further;
    naming one the table does not allow raises ``IllegalTransition``, as does an unknown status.

    ``started_at`` is set when a job first leaves the queue and ``finished_at`` when it reaches a
    terminal status. Only the given optional fields are written. Raises ``JobNotFound``.
    """
    try:
        status = JobStatus(status)
    except ValueError:
        raise IllegalTransition(f"unknown job status {status!r}") from None
    allowed = sources(status)
    if expected is not None:
        asked = {JobStatus(s) for s in expected}
        if not asked <= allowed:
            illegal = ", ".join(sorted(asked - allowed))
            raise IllegalTransition(f"a job cannot move from {illegal} to {status}")
        allowed = frozenset(asked)
    values: dict[str, Any] = {"status": status, "updated_at": func.now()}
    if status in STARTED:
        values["started_at"] = func.coalesce(Job.started_at, func.now())
    if status in TERMINAL:
        values["finished_at"] = func.now()
    for name, value in (
        ("error", error),
        ("result_key", result_key),
        ("result_content_type", result_content_type),
        ("audio_seconds", audio_seconds),
    ):
        if value is not None:
            values[name] = value
    statement = update(Job).where(Job.id == job_id, Job.status.in_(sorted(allowed)))
    result = session.execute(
        statement.values(**values).returning(Job.id).execution_options(synchronize_session="fetch")
    )
    if result.scalar_one_or_none() is not None:
        return True
    if session.scalar(select(Job.id).where(Job.id == job_id)) is None:
        raise JobNotFound(f"no job {job_id}")
    return False


def add_chunks(*, session: Session, job_id: uuid.UUID, texts: Sequence[str], characters: Sequence[int]) -> int:
    """Store a job's chunks as indices 0..n-1, each with the characters it bills (the caller's
    rule: ``speech.billing``), and set ``chunks_total``; existing chunks are kept (a repeated
    planning step changes nothing). Returns ``chunks_total``."""
    if len(characters) != len(texts):
        raise ValueError("one billed count per chunk text")
    if texts:
        session.execute(
            insert(JobChunk).on_conflict_do_nothing(index_elements=[JobChunk.job_id, JobChunk.index]),
            [
                {"job_id": job_id, "index": index, "text": text, "characters": count, "status": ChunkStatus.PENDING}
                for index, (text, count) in enumerate(zip(texts, characters, strict=True))
            ],
        )
    total = session.execute(
        update(Job)
        .where(Job.id == job_id)
        .values(
            chunks_total=select(func.count()).where(JobChunk.job_id == job_id).scalar_subquery(),
            updated_at=func.now(),
        )
        .returning(Job.chunks_total)
        .execution_options(synchronize_session="fetch")
    ).scalar_one_or_none()
    if total is None:
        raise JobNotFound(f"no job {job_id}")
    return int(total)


def mark_chunk_done(
    *, session: Session, job_id: uuid.UUID, index: int, audio_key: str, duration_s: float
) -> bool:
    """Record a chunk's audio and count it in ``chunks_done``; return False if it was already done
    or the job has ended (canceled, failed: nothing is changed then, so nothing more is billed).
    Raises ``JobNotFound`` when the job has no such chunk.

    The job row is locked first: a cancel either commits before (and this sees it) or waits
    until this chunk is counted, never in between. One lock order (job, then chunk) everywhere."""
    return bool(mark_chunks_done(session=session, job_id=job_id, done=[(index, audio_key, duration_s)]))


def mark_chunks_done(
    *, session: Session, job_id: uuid.UUID, done: Sequence[tuple[int, str, float]],
    content_keys: Mapping[int, str] | None = None, reused: bool = False,
) -> list[int]:
    """Mark a group of chunks done, ``(index, audio_key, duration_s)`` each, in a
    fixed few cached statements whatever their number (a GPU group holds ~40 chunks, and
    per-chunk statements took most of a GPU worker's time outside the engine). Returns the indices
    newly marked, in the given order, with the same guarantees: the job row is locked first, then
    the group's pending chunk rows; chunks already done, or of an ended job, are left alone;
    ``JobNotFound`` for a chunk the job does not have. ``content_keys`` records each chunk's
    content key (its reference to the account's chunk cache); ``reused``: their audio came from
    that cache (``job_reused_characters`` counts them)."""
    status = session.scalar(select(Job.status).where(Job.id == job_id).with_for_update())
    if status is None:
        raise JobNotFound(f"no job {job_id}")
    if status in TERMINAL or not done:
        return []
    indices = [int(i) for i, _, _ in done]
    pending = set(
        session.scalars(
            select(JobChunk.index)
            .where(JobChunk.job_id == job_id, JobChunk.index.in_(indices), JobChunk.status == ChunkStatus.PENDING)
            .with_for_update()
        )
    )
    if len(pending) < len(indices):
        known = set(session.scalars(select(JobChunk.index).where(JobChunk.job_id == job_id, JobChunk.index.in_(indices))))
        missing = [i for i in indices if i not in known]
        if missing:
            raise JobNotFound(f"job {job_id} has no chunk {missing[0]}")
    keys = content_keys or {}
    rows = [
        {"job": job_id, "at": int(i), "key": key, "seconds": float(d), "content": keys.get(int(i))}
        for i, key, d in done
        if int(i) in pending
    ]
    if rows:
        chunks = cast(Table, JobChunk.__table__)
        session.connection().execute(  # Core executemany: one cached statement for every row
            chunks.update()
            .where(chunks.c.job_id == bindparam("job"), chunks.c.index == bindparam("at"))
            .values(
                status=ChunkStatus.DONE.value, audio_key=bindparam("key"), duration_s=bindparam("seconds"),
                content_key=bindparam("content"), reused=reused, updated_at=func.now(),
            ),
            rows,
        )
        session.execute(
            update(Job)
            .where(Job.id == job_id)
            .values(chunks_done=Job.chunks_done + len(rows), updated_at=func.now())
            .execution_options(synchronize_session="fetch")
        )
    return [int(i) for i, _, _ in done if int(i) in pending]


def job_reused_characters(*, session: Session, job_id: uuid.UUID) -> int:
    """Characters of the job's chunks whose audio came from the account's chunk cache: not billed
    again (``billedCharacters`` beside it counts the usage rows)."""
    total = session.scalar(
        select(func.coalesce(func.sum(JobChunk.characters), 0)).where(JobChunk.job_id == job_id, JobChunk.reused.is_(True))
    )
    return int(total or 0)


def set_chunk_duration(
    *, session: Session, job_id: uuid.UUID, index: int, duration_s: float, audio_key: str | None = None,
) -> bool:
    """A done chunk's audio was replaced (the QA check rendered it again): its new length, which
    assembly's timeline reads, and its new key when given. Only while the job runs; False when
    nothing was changed."""
    status = session.scalar(select(Job.status).where(Job.id == job_id).with_for_update())
    if status != JobStatus.RUNNING:
        return False
    changed = session.execute(
        update(JobChunk)
        .where(JobChunk.job_id == job_id, JobChunk.index == index, JobChunk.status == ChunkStatus.DONE)
        .values(duration_s=float(duration_s), updated_at=func.now(), **({} if audio_key is None else {"audio_key": audio_key}))
        .execution_options(synchronize_session=False)
    )
    session.execute(update(Job).where(Job.id == job_id).values(updated_at=func.now()))
    return bool(changed.rowcount)  # type: ignore[attr-defined]


def audio_seconds_done(*, session: Session, job_id: uuid.UUID) -> float:
    """Seconds of audio synthesized so far (the progress a client sees while a job runs)."""
    total = session.scalar(
        select(func.sum(JobChunk.duration_s)).where(JobChunk.job_id == job_id, JobChunk.status == ChunkStatus.DONE)
    )
    return float(total or 0.0)


def batches_dispatched(*, session: Session, job_id: uuid.UUID) -> int:
    """How many of the job's planned batches a job planned before ``job_batches`` had handed to
    the queue (its dispatch counter then); 0 for every job planned since."""
    value = session.scalar(select(Job.params["batches_dispatched"].as_integer()).where(Job.id == job_id))
    return int(value or 0)


#: The first of the two 32-bit keys of a job's assembly lock: its namespace among advisory locks
#: (the second key is the job's). Two-key and one-key advisory locks never meet (migrations hold
#: a one-key lock).
_ASSEMBLY_LOCK_SPACE = 0x4C41  # "LA": lector assembly


def lock_assembly(*, session: Session, job_id: uuid.UUID, wait: bool) -> bool:
    """Hold the job's assembly lock until this session's transaction ends; True when held.
    ``wait=False`` returns False at once if another transaction holds it. A PostgreSQL advisory
    lock, so a worker that dies mid-step releases it with its connection, and nothing is written.
    Two jobs may share the second key (32 bits of the id): then they only wait for each other."""
    return _job_lock(session, _ASSEMBLY_LOCK_SPACE, job_id, wait=wait)


#: The live playlist's lock (``scheduler.hls``): apart from assembly's, so segments for
#: listening go on while a chapter is encoded ahead or the book is assembled.
_HLS_LOCK_SPACE = 0x4C48  # "LH": lector HLS


def lock_hls(*, session: Session, job_id: uuid.UUID) -> bool:
    """Try to hold the job's live-playlist lock until this session's transaction ends (False at
    once when another transaction holds it); one segment maker per job at a time."""
    return _job_lock(session, _HLS_LOCK_SPACE, job_id, wait=False)


def _job_lock(session: Session, space_key: int, job_id: uuid.UUID, *, wait: bool) -> bool:
    key = int.from_bytes(job_id.bytes[:4], "big", signed=True)
    space = literal(space_key, Integer)
    if wait:
        session.execute(select(func.pg_advisory_xact_lock(space, literal(key, Integer))))
        return True
    return bool(session.scalar(select(func.pg_try_advisory_xact_lock(space, literal(key, Integer)))))


def expirable_jobs(*, session: Session, finished_before: datetime, limit: int = 100) -> list[Job]:
    """Finished jobs older than the retention period whose objects are not yet deleted; locked
    (``SKIP LOCKED``) so two sweeps never work on one job."""
    return list(
        session.scalars(
            select(Job)
            .where(
                Job.status.in_(sorted(TERMINAL)),
                Job.finished_at < finished_before,
                not_expired(),
            )
            .order_by(Job.finished_at)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
    )


def not_expired() -> ColumnElement[bool]:
    """SQL: the job's objects are still there (``mark_expired`` has not run); the store's own mark."""
    mark: ColumnElement[bool] = Job.params["expired"].as_boolean().is_not(True)
    return mark


def mark_expired(*, session: Session, job_id: uuid.UUID) -> None:
    """The job's objects are gone: no result, no source; the row (and its billing) stays."""
    session.execute(
        update(Job)
        .where(Job.id == job_id)
        .values(
            result_key=None,
            text_key=None,
            params=Job.params.op("||")(func.jsonb_build_object("expired", True, "expired_at", func.now())),
        )
        .execution_options(synchronize_session="fetch")
    )


def is_expired(job: Job) -> bool:
    """Whether ``mark_expired`` ran for the job (its mark lives in ``params``, beside the options)."""
    return bool((job.params or {}).get("expired"))


def pending_chunks(*, session: Session, job_id: uuid.UUID) -> list[JobChunk]:
    """The chunks still to synthesize, in order."""
    return list(
        session.scalars(
            select(JobChunk)
            .where(JobChunk.job_id == job_id, JobChunk.status == ChunkStatus.PENDING)
            .order_by(JobChunk.index)
        )
    )


def still_pending(*, session: Session, job_id: uuid.UUID, indices: Sequence[int]) -> set[int]:
    """Which of ``indices`` are pending now: a task that synthesized them looks again before it
    writes their audio, since another host may have stored and marked them meanwhile (a frozen
    host thawed late, a twin task)."""
    if not indices:
        return set()
    return set(
        session.scalars(
            select(JobChunk.index).where(
                JobChunk.job_id == job_id, JobChunk.index.in_([int(i) for i in indices]), JobChunk.status == ChunkStatus.PENDING
            )
        )
    )


def list_chunks(*, session: Session, job_id: uuid.UUID) -> list[JobChunk]:
    """All of a job's chunks, in order (what ``assemble`` stitches)."""
    return list(session.scalars(select(JobChunk).where(JobChunk.job_id == job_id).order_by(JobChunk.index)))


def chunk_durations(*, session: Session, job_id: uuid.UUID) -> list[float | None]:
    """Each chunk's audio length in seconds, in order (None: not synthesized)."""
    return list(session.scalars(select(JobChunk.duration_s).where(JobChunk.job_id == job_id).order_by(JobChunk.index)))


def chunk_audio_keys(*, session: Session, job_id: uuid.UUID) -> list[str | None]:
    """Each chunk's audio key, in order, as its winning write recorded it (None: not synthesized).
    Readers take the key from here, not from the index: an attempt's late write goes elsewhere."""
    return list(session.scalars(select(JobChunk.audio_key).where(JobChunk.job_id == job_id).order_by(JobChunk.index)))


def record_webhook_attempt(
    *,
    session: Session,
    job_id: uuid.UUID,
    attempt: int,
    url: str,
    event: str,
    delivered: bool,
    status_code: int | None = None,
    error: str | None = None,
) -> WebhookAttempt:
    """Append one delivery attempt (the log of every try, delivered or not)."""
    row = WebhookAttempt(
        job_id=job_id,
        attempt=attempt,
        url=url,
        event=event,
        delivered=delivered,
        status_code=status_code,
        error=error,
    )
    session.add(row)
    session.flush()
    return row


def list_webhook_attempts(*, session: Session, job_id: uuid.UUID) -> list[WebhookAttempt]:
    return list(
        session.scalars(
            select(WebhookAttempt).where(WebhookAttempt.job_id == job_id).order_by(WebhookAttempt.id)
        )
    )
