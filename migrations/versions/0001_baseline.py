"""Baseline: accounts, API keys, usage, jobs, job chunks, webhook attempts.

Written by hand to match ``store/db/models.py`` (constraint names follow the naming convention in
``store/db/base.py``); ``tests/integration/store/test_migrations.py`` checks that they agree.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TSTZ = postgresql.TIMESTAMP(timezone=True)


def _now() -> sa.TextClause:
    return sa.text("now()")


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("status", sa.String(16), server_default="active", nullable=False),
        sa.Column("subscription_valid_until", TSTZ, nullable=True),
        sa.Column("allowed_models", postgresql.JSONB(), nullable=True),
        sa.Column("allowed_endpoints", postgresql.JSONB(), nullable=True),
        sa.Column("ws_connections_per_minute", sa.Integer(), server_default="60", nullable=False),
        sa.Column("webhook_secret", sa.String(64), nullable=False),
        sa.Column("created_at", TSTZ, server_default=_now(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_accounts")),
        sa.UniqueConstraint("name", name=op.f("uq_accounts_name")),
        sa.CheckConstraint("status IN ('active', 'disabled')", name=op.f("ck_accounts_status")),
    )

    op.create_table(
        "api_keys",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("account_id", sa.Uuid(), nullable=False),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), server_default="default", nullable=False),
        sa.Column("created_at", TSTZ, server_default=_now(), nullable=False),
        sa.Column("last_used_at", TSTZ, nullable=True),
        sa.Column("revoked_at", TSTZ, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_api_keys_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.UniqueConstraint("prefix", name=op.f("uq_api_keys_prefix")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
    )
    op.create_index(op.f("ix_api_keys_account_id"), "api_keys", ["account_id"])

    op.create_table(
        "jobs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("account_id", sa.Uuid(), nullable=False),
        sa.Column("status", sa.String(16), server_default="queued", nullable=False),
        sa.Column("idempotency_key", sa.String(255), nullable=True),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("params", postgresql.JSONB(), nullable=False),
        sa.Column("text_key", sa.String(512), nullable=True),
        sa.Column("characters", sa.Integer(), server_default="0", nullable=False),
        sa.Column("chunks_total", sa.Integer(), server_default="0", nullable=False),
        sa.Column("chunks_done", sa.Integer(), server_default="0", nullable=False),
        sa.Column("audio_seconds", sa.Float(), nullable=True),
        sa.Column("result_key", sa.String(512), nullable=True),
        sa.Column("result_content_type", sa.String(128), nullable=True),
        sa.Column("webhook_url", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", TSTZ, server_default=_now(), nullable=False),
        sa.Column("updated_at", TSTZ, server_default=_now(), nullable=False),
        sa.Column("started_at", TSTZ, nullable=True),
        sa.Column("finished_at", TSTZ, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"], name=op.f("fk_jobs_account_id_accounts")),
        sa.UniqueConstraint("account_id", "idempotency_key", name=op.f("uq_jobs_account_id_idempotency_key")),
        sa.CheckConstraint(
            "status IN ('queued', 'planning', 'running', 'assembling', 'succeeded', 'failed', 'canceled')",
            name=op.f("ck_jobs_status"),
        ),
    )
    op.create_index(op.f("ix_jobs_account_id_created_at"), "jobs", ["account_id", "created_at"])

    op.create_table(
        "job_chunks",
        sa.Column("job_id", sa.Uuid(), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("characters", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), server_default="pending", nullable=False),
        sa.Column("audio_key", sa.String(512), nullable=True),
        sa.Column("duration_s", sa.Float(), nullable=True),
        sa.Column("updated_at", TSTZ, server_default=_now(), nullable=False),
        sa.PrimaryKeyConstraint("job_id", "index", name=op.f("pk_job_chunks")),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_job_chunks_job_id_jobs"), ondelete="CASCADE"
        ),
        sa.CheckConstraint("status IN ('pending', 'done')", name=op.f("ck_job_chunks_status")),
    )

    op.create_table(
        "usage",
        sa.Column("id", sa.BigInteger(), sa.Identity(), nullable=False),
        sa.Column("account_id", sa.Uuid(), nullable=False),
        sa.Column("api_key_id", sa.Uuid(), nullable=True),
        sa.Column("transport", sa.String(8), nullable=False),
        sa.Column("request_id", sa.String(64), nullable=True),
        sa.Column("job_id", sa.Uuid(), nullable=True),
        sa.Column("chunk_index", sa.Integer(), nullable=True),
        sa.Column("model", sa.String(64), nullable=False),
        sa.Column("speaker", sa.String(128), nullable=False),
        sa.Column("lang", sa.String(16), nullable=True),
        sa.Column("characters", sa.Integer(), nullable=False),
        sa.Column("audio_seconds", sa.Float(), server_default="0", nullable=False),
        sa.Column("created_at", TSTZ, server_default=_now(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_usage")),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"], name=op.f("fk_usage_account_id_accounts")),
        sa.ForeignKeyConstraint(
            ["api_key_id"], ["api_keys.id"], name=op.f("fk_usage_api_key_id_api_keys"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name=op.f("fk_usage_job_id_jobs")),
        # Billing counts a job chunk once: the insert is ON CONFLICT (job_id, chunk_index) DO NOTHING.
        sa.UniqueConstraint("job_id", "chunk_index", name=op.f("uq_usage_job_id_chunk_index")),
        sa.CheckConstraint("transport IN ('http', 'ws', 'job')", name=op.f("ck_usage_transport")),
        sa.CheckConstraint(
            "(transport = 'job') = (job_id IS NOT NULL AND chunk_index IS NOT NULL)",
            name=op.f("ck_usage_job_rows_have_chunk"),
        ),
    )
    op.create_index(op.f("ix_usage_account_id_created_at"), "usage", ["account_id", "created_at"])

    op.create_table(
        "webhook_attempts",
        sa.Column("id", sa.BigInteger(), sa.Identity(), nullable=False),
        sa.Column("job_id", sa.Uuid(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("event", sa.String(64), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("delivered", sa.Boolean(), nullable=False),
        sa.Column("created_at", TSTZ, server_default=_now(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_attempts")),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_webhook_attempts_job_id_jobs"), ondelete="CASCADE"
        ),
    )
    op.create_index(op.f("ix_webhook_attempts_job_id"), "webhook_attempts", ["job_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_webhook_attempts_job_id"), table_name="webhook_attempts")
    op.drop_table("webhook_attempts")
    op.drop_index(op.f("ix_usage_account_id_created_at"), table_name="usage")
    op.drop_table("usage")
    op.drop_table("job_chunks")
    op.drop_index(op.f("ix_jobs_account_id_created_at"), table_name="jobs")
    op.drop_table("jobs")
    op.drop_index(op.f("ix_api_keys_account_id"), table_name="api_keys")
    op.drop_table("api_keys")
    op.drop_table("accounts")
