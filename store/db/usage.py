"""Billing rows (append-only) and their totals.

Streaming requests are billed one row per request, retries included (the vendor API contract: "each request is
billed independently"). Job rows are one per chunk and unique on (job_id, chunk_index): the insert
is ``ON CONFLICT DO NOTHING``, so a redelivered task, or two workers racing on the same chunk, bill
it exactly once; the loser's insert waits for the winner's transaction and then inserts nothing.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from store.db.models import TRANSPORTS, Account, Usage


class UsageTotal(NamedTuple):
    account_id: uuid.UUID
    account_name: str
    model: str
    rows: int
    characters: int
    audio_seconds: float


def record_usage(
    *,
    session: Session,
    account_id: uuid.UUID,
    transport: str,
    model: str,
    speaker: str,
    characters: int,
    audio_seconds: float = 0.0,
    lang: str | None = None,
    api_key_id: uuid.UUID | None = None,
    request_id: str | None = None,
    job_id: uuid.UUID | None = None,
    chunk_index: int | None = None,
    created_at: datetime | None = None,
) -> bool:
    """Append one usage row; return whether it was inserted (False: this job chunk was already billed).

    ``transport='job'`` requires ``job_id`` and ``chunk_index``; the other transports forbid them.
    """
    if transport not in TRANSPORTS:
        raise ValueError(f"unknown transport {transport!r}")
    is_job_row = job_id is not None and chunk_index is not None
    if (transport == "job") != is_job_row:
        raise ValueError("job usage rows need job_id and chunk_index; other transports take neither")
    if characters < 0 or audio_seconds < 0:
        raise ValueError("usage must not be negative")
    statement = (
        insert(Usage)
        .values(
            account_id=account_id,
            api_key_id=api_key_id,
            transport=transport,
            request_id=request_id,
            job_id=job_id,
            chunk_index=chunk_index,
            model=model,
            speaker=speaker,
            lang=lang,
            characters=characters,
            audio_seconds=audio_seconds,
            **({"created_at": created_at} if created_at is not None else {}),
        )
        .on_conflict_do_nothing(index_elements=[Usage.job_id, Usage.chunk_index])
        .returning(Usage.id)
    )
    return session.execute(statement).scalar_one_or_none() is not None


def record_job_usage(
    *,
    session: Session,
    account_id: uuid.UUID,
    job_id: uuid.UUID,
    model: str,
    speaker: str,
    lang: str | None,
    chunks: list[tuple[int, int, float]],
) -> None:
    """One usage row per job chunk, ``(chunk_index, characters, audio_seconds)`` each, in one
    cached statement run for all of them; a chunk already billed is skipped."""
    if not chunks:
        return
    if any(characters < 0 or seconds < 0 for _, characters, seconds in chunks):
        raise ValueError("usage must not be negative")
    rows = [
        {
            "account_id": account_id, "transport": "job", "job_id": job_id, "chunk_index": index,
            "model": model, "speaker": speaker, "lang": lang, "characters": characters, "audio_seconds": seconds,
        }
        for index, characters, seconds in chunks
    ]
    statement = insert(Usage).on_conflict_do_nothing(index_elements=["job_id", "chunk_index"])
    session.connection().execute(statement, rows)


def request_billed(*, session: Session, request_id: str, account_id: uuid.UUID, at: datetime) -> bool:
    """Whether a streaming request's row is already in (a replay from a spool must not bill twice).

    Looked up by the row's own time, so the BRIN index on ``created_at`` keeps it cheap."""
    query = select(Usage.id).where(
        Usage.account_id == account_id, Usage.request_id == request_id, Usage.created_at == at
    )
    return session.execute(query.limit(1)).first() is not None


def usage_totals(
    *, session: Session, start: datetime, end: datetime, account_id: uuid.UUID | None = None
) -> list[UsageTotal]:
    """Totals per account and model for ``start <= created_at < end``, ordered by account name, model."""
    query = (
        select(
            Account.id,
            Account.name,
            Usage.model,
            func.count(Usage.id),
            func.coalesce(func.sum(Usage.characters), 0),
            func.coalesce(func.sum(Usage.audio_seconds), 0.0),
        )
        .join(Account, Account.id == Usage.account_id)
        .where(Usage.created_at >= start, Usage.created_at < end)
        .group_by(Account.id, Account.name, Usage.model)
        .order_by(Account.name, Usage.model)
    )
    if account_id is not None:
        query = query.where(Usage.account_id == account_id)
    return [
        UsageTotal(row[0], row[1], row[2], int(row[3]), int(row[4]), float(row[5]))
        for row in session.execute(query)
    ]


def job_billed_characters(*, session: Session, job_id: uuid.UUID) -> int:
    """Characters billed for a job so far: the sum of its chunk rows (the unique (job_id,
    chunk_index) index finds them). Equals the job's total once it has succeeded."""
    total = session.execute(
        select(func.coalesce(func.sum(Usage.characters), 0)).where(Usage.job_id == job_id)
    ).scalar_one()
    return int(total)
