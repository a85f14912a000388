"""Revisions: an account's rendered chunks by content key (``chunk_cache``), and each job chunk's
reference to its entry (``job_chunks.content_key``) and whether its audio was reused.

Revision ID: 0006_chunk_cache
Revises: 0005_speed_rates
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_chunk_cache"
down_revision: str | None = "0005_speed_rates"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "chunk_cache",
        sa.Column("account_id", sa.Uuid(), nullable=False),
        sa.Column("content_key", sa.String(length=64), nullable=False),
        sa.Column("audio_key", sa.String(length=512), nullable=False),
        sa.Column("characters", sa.Integer(), nullable=False),
        sa.Column("duration_s", sa.Float(), nullable=False),
        sa.Column("created_at", sa.TIMESTAMP(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("last_used_at", sa.TIMESTAMP(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"], name=op.f("fk_chunk_cache_account_id_accounts"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("account_id", "content_key", name=op.f("pk_chunk_cache")),
    )
    op.create_index(op.f("ix_chunk_cache_last_used_at"), "chunk_cache", ["last_used_at"])
    op.add_column("job_chunks", sa.Column("content_key", sa.String(length=64), nullable=True))
    op.add_column("job_chunks", sa.Column("reused", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_index(op.f("ix_job_chunks_content_key"), "job_chunks", ["content_key"])


def downgrade() -> None:
    op.drop_index(op.f("ix_job_chunks_content_key"), table_name="job_chunks")
    op.drop_column("job_chunks", "reused")
    op.drop_column("job_chunks", "content_key")
    op.drop_index(op.f("ix_chunk_cache_last_used_at"), table_name="chunk_cache")
    op.drop_table("chunk_cache")
