"""The PostgreSQL tables, as typed SQLAlchemy 2 models.

Statuses are short strings guarded by CHECK constraints rather than PostgreSQL enums: adding a
state is then a one-line migration instead of an ``ALTER TYPE`` that cannot run in a transaction.
A job's and a chunk's are read back as the enums of ``store.status``.
Every change here needs a matching migration under ``migrations/versions``;
``tests/integration/store/test_migrations.py`` fails when the two drift apart.
"""

from __future__ import annotations

import secrets
import uuid
from datetime import date, datetime
from enum import StrEnum
from typing import Any, Final, TypeVar

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Float,
    ForeignKey,
    Identity,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from store.db.base import Base
from store.status import TERMINAL, BatchState, ChunkStatus, JobStatus

ACCOUNT_STATUSES: Final = ("active", "disabled")
TRANSPORTS: Final = ("http", "ws", "job")
JOB_STATUSES: Final = tuple(s.value for s in JobStatus)
CHUNK_STATUSES: Final = tuple(s.value for s in ChunkStatus)
BATCH_STATES: Final = tuple(s.value for s in BatchState)

E = TypeVar("E", bound=StrEnum)


class _StatusColumn(TypeDecorator[E]):
    """A ``VARCHAR(16)`` read back as a status enum: the column's DDL is the plain string it was
    (no migration), and rows come out typed, so a comparison with a misspelt string cannot hide."""

    impl = String(16)
    cache_ok = True

    def __init__(self, enum: type[E]) -> None:
        super().__init__()
        self._enum = enum

    def process_bind_param(self, value: E | str | None, dialect: Dialect) -> str | None:
        return None if value is None else self._enum(value).value

    def process_result_value(self, value: str | None, dialect: Dialect) -> E | None:
        return None if value is None else self._enum(value)


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


def new_webhook_secret() -> str:
    """A per-account secret for HMAC-signing webhooks; 43 url-safe characters."""
    return secrets.token_urlsafe(32)


class Account(Base):
    """A customer. ``subscription_valid_until`` NULL means unlimited; a past instant means expired.
    ``allowed_models`` / ``allowed_endpoints`` NULL means everything is allowed."""

    __tablename__ = "accounts"
    __table_args__ = (CheckConstraint(_in("status", ACCOUNT_STATUSES), name="status"),)
    # Server defaults are read when first used, not RETURNed by the INSERT: an insert then names
    # only the columns it sets, so code that writes accounts also works on a schema migrated to
    # an earlier revision (the usage rollup's migration test writes rows before 0002).
    __mapper_args__ = {"eager_defaults": False}

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    status: Mapped[str] = mapped_column(String(16), default="active", server_default="active")
    subscription_valid_until: Mapped[datetime | None]
    allowed_models: Mapped[list[str] | None]
    allowed_endpoints: Mapped[list[str] | None]
    ws_connections_per_minute: Mapped[int] = mapped_column(default=60, server_default="60")
    webhook_secret: Mapped[str] = mapped_column(String(64), default=new_webhook_secret)
    # Jobs that do not say "qa" get this (scheduler.qa: the speech-recognition check of a book).
    qa_default: Mapped[bool] = mapped_column(server_default=false())  # no client default: rows written before 0004 omit it
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())


class ApiKey(Base):
    """A bearer key. Only its SHA-256 is stored; ``prefix`` is the visible start, for humans."""

    __tablename__ = "api_keys"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200), default="default", server_default="default")
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]


class Usage(Base):
    """Append-only billing rows. Job rows are one per chunk, unique on (job_id, chunk_index), so a
    chunk synthesized twice (a redelivered task) is billed once. Streaming rows have no job."""

    __tablename__ = "usage"
    __table_args__ = (
        CheckConstraint(_in("transport", TRANSPORTS), name="transport"),
        CheckConstraint(
            "(transport = 'job') = (job_id IS NOT NULL AND chunk_index IS NOT NULL)",
            name="job_rows_have_chunk",
        ),
        UniqueConstraint("job_id", "chunk_index"),
        Index(None, "account_id", "created_at"),
        # Rows arrive in time order, so a BRIN index finds a time range for a few kB (migration 0002).
        Index(None, "created_at", postgresql_using="brin"),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id"))
    api_key_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"))
    transport: Mapped[str] = mapped_column(String(8))
    request_id: Mapped[str | None] = mapped_column(String(64))
    job_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("jobs.id"))
    chunk_index: Mapped[int | None]
    model: Mapped[str] = mapped_column(String(64))
    speaker: Mapped[str] = mapped_column(String(128))
    lang: Mapped[str | None] = mapped_column(String(16))
    characters: Mapped[int]
    audio_seconds: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())


class UsageDaily(Base):
    """The ledger summed per UTC day and (account, key, model, speaker, transport, lang): what
    admin reports read instead of millions of raw rows.

    Kept exact by triggers on ``usage`` (migration 0002), in the writer's own transaction: every
    inserted, updated or deleted usage row moves these sums, whoever wrote it. A job chunk's
    losing retry inserts no usage row, so it moves nothing. ``api_key_id`` carries no foreign key:
    the row is history, and NULLs compare equal in the unique slot (PostgreSQL 15's NULLS NOT
    DISTINCT), so the upsert's conflict target also covers rows without a key or a language.
    """

    __tablename__ = "usage_daily"
    __table_args__ = (
        CheckConstraint(_in("transport", TRANSPORTS), name="transport"),
        # account_id first: "one account, a date range" is a range scan of this index.
        UniqueConstraint(
            "account_id",
            "day",
            "model",
            "speaker",
            "transport",
            "lang",
            "api_key_id",
            name="uq_usage_daily_slot",
            postgresql_nulls_not_distinct=True,
        ),
        Index(None, "day"),  # "every account, a date range"
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    day: Mapped[date]
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id"))
    api_key_id: Mapped[uuid.UUID | None]
    transport: Mapped[str] = mapped_column(String(8))
    model: Mapped[str] = mapped_column(String(64))
    speaker: Mapped[str] = mapped_column(String(128))
    lang: Mapped[str | None] = mapped_column(String(16))
    row_count: Mapped[int] = mapped_column(BigInteger)
    characters: Mapped[int] = mapped_column(BigInteger)
    audio_seconds: Mapped[float] = mapped_column(Float)


class Job(Base):
    """A long-form synthesis job. ``params`` holds the request's options as
    ``scheduler.job_params.JobParams.to_stored`` writes them (read back only through
    ``JobParams.from_stored``) beside the store's own progress keys (``store.db.jobs``); the
    source text lives in the object store under ``text_key``."""

    __tablename__ = "jobs"
    __table_args__ = (
        CheckConstraint(_in("status", JOB_STATUSES), name="status"),
        UniqueConstraint("account_id", "idempotency_key"),
        Index(None, "account_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id"))
    status: Mapped[JobStatus] = mapped_column(
        _StatusColumn(JobStatus), default=JobStatus.QUEUED, server_default=JobStatus.QUEUED.value
    )
    idempotency_key: Mapped[str | None] = mapped_column(String(255))
    request_hash: Mapped[str] = mapped_column(String(64))
    params: Mapped[dict[str, Any]]
    text_key: Mapped[str | None] = mapped_column(String(512))
    characters: Mapped[int] = mapped_column(default=0, server_default="0")
    chunks_total: Mapped[int] = mapped_column(default=0, server_default="0")
    chunks_done: Mapped[int] = mapped_column(default=0, server_default="0")
    audio_seconds: Mapped[float | None] = mapped_column(Float)
    result_key: Mapped[str | None] = mapped_column(String(512))
    result_content_type: Mapped[str | None] = mapped_column(String(128))
    webhook_url: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now(), onupdate=func.now())
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL


class JobChunk(Base):
    """One sentence-aligned piece of a job's text; its audio lives under ``audio_key``."""

    __tablename__ = "job_chunks"
    __table_args__ = (CheckConstraint(_in("status", CHUNK_STATUSES), name="status"),)

    job_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    index: Mapped[int] = mapped_column(Integer, primary_key=True)
    text: Mapped[str] = mapped_column(Text)
    characters: Mapped[int]
    status: Mapped[ChunkStatus] = mapped_column(
        _StatusColumn(ChunkStatus), default=ChunkStatus.PENDING, server_default=ChunkStatus.PENDING.value
    )
    audio_key: Mapped[str | None] = mapped_column(String(512))
    duration_s: Mapped[float | None] = mapped_column(Float)
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now(), onupdate=func.now())
    # The chunk's content key (scheduler.content_keys), set when it is done: the job's reference
    # to the account's cached audio (ChunkCacheEntry), which keeps that entry alive.
    content_key: Mapped[str | None] = mapped_column(String(64), index=True)
    # Its audio came from the account's cache: no usage row, counted in the job's reusedCharacters.
    reused: Mapped[bool] = mapped_column(server_default=false())  # no client default: rows written before 0005 omit it


class JobBatch(Base):
    """One planned batch of a job's chunks, numbered in dispatch order: what the fair share
    between accounts (``scheduler.fair_share``) counts and picks from. ``sent_at``: when it was
    handed to the synth queue; a job's latest is when it was last served (round robin, the
    oldest served first). The task's message carries ``indices``, which finds the row again."""

    __tablename__ = "job_batches"
    __table_args__ = (
        CheckConstraint(_in("state", BATCH_STATES), name="state"),
        # Every hand-out counts an account's batches in flight and finds its jobs' next waiting
        # one: partial indexes keep both to the few rows in those states, not a book's hundreds.
        Index("ix_job_batches_sent", "job_id", postgresql_where=text("state = 'sent'")),
        Index("ix_job_batches_waiting", "job_id", "number", postgresql_where=text("state = 'waiting'")),
    )

    job_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    indices: Mapped[list[int]] = mapped_column(ARRAY(Integer))
    # Its own word, not "status": a batch is not a job, and only ``set_job_status`` writes statuses.
    state: Mapped[BatchState] = mapped_column(
        _StatusColumn(BatchState), default=BatchState.WAITING, server_default=BatchState.WAITING.value
    )
    sent_at: Mapped[datetime | None]


class ChunkCacheEntry(Base):
    """An account's rendered chunk, by content key (``scheduler.content_keys``): where its audio
    and metadata are kept (``audio_key``; the metadata beside it) and what it billed when it was
    made. A later job of the account whose chunk has the same key copies this audio instead of
    synthesizing it, and bills nothing for it. An entry lives while a job that is not expired
    refers to it (``JobChunk.content_key``) or it was used within the retention period
    (``scheduler.retention.expire_cache``)."""

    __tablename__ = "chunk_cache"

    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True)
    content_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    audio_key: Mapped[str] = mapped_column(String(512))
    characters: Mapped[int]
    duration_s: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    last_used_at: Mapped[datetime] = mapped_column(server_default=func.now(), index=True)


class WebhookAttempt(Base):
    """Every delivery attempt of a job's webhook, successful or not, for support and audits."""

    __tablename__ = "webhook_attempts"

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    job_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    attempt: Mapped[int]
    url: Mapped[str] = mapped_column(Text)
    event: Mapped[str] = mapped_column(String(64))
    status_code: Mapped[int | None]
    error: Mapped[str | None] = mapped_column(Text)
    delivered: Mapped[bool]
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())


class Lexicon(Base):
    """One version of an account's named pronunciation lexicon (W3C PLS 1.0, stored as sent).
    A ``PUT`` adds a version; older ones stay, so a job that names a version can be rerun as it
    was. ``is_default``: the account's requests use this lexicon when they name none (the
    latest version's flag counts)."""

    __tablename__ = "lexicons"
    __table_args__ = (UniqueConstraint("account_id", "name", "version"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    version: Mapped[int]
    lang: Mapped[str] = mapped_column(String(8))
    lexemes: Mapped[int]
    size_bytes: Mapped[int]
    content: Mapped[str] = mapped_column(Text)
    is_default: Mapped[bool] = mapped_column(default=False, server_default="false")
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
