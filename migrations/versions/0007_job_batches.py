"""Fair share between accounts: a job's planned batches as rows (``job_batches``), so that the
batches an account has in flight can be counted, and its jobs served in turn, under a lock.

Revision ID: 0007_job_batches
Revises: 0006_chunk_cache
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007_job_batches"
down_revision: str | None = "0006_chunk_cache"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "job_batches",
        sa.Column("job_id", sa.Uuid(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("indices", postgresql.ARRAY(sa.Integer()), nullable=False),
        sa.Column("state", sa.String(length=16), server_default="waiting", nullable=False),
        sa.Column("sent_at", sa.TIMESTAMP(timezone=True), nullable=True),
        sa.CheckConstraint("state IN ('waiting', 'sent', 'done')", name=op.f("ck_job_batches_state")),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name=op.f("fk_job_batches_job_id_jobs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("job_id", "number", name=op.f("pk_job_batches")),
    )
    op.create_index("ix_job_batches_sent", "job_batches", ["job_id"], postgresql_where=sa.text("state = 'sent'"))
    op.create_index(
        "ix_job_batches_waiting", "job_batches", ["job_id", "number"], postgresql_where=sa.text("state = 'waiting'")
    )


def downgrade() -> None:
    op.drop_index("ix_job_batches_waiting", table_name="job_batches")
    op.drop_index("ix_job_batches_sent", table_name="job_batches")
    op.drop_table("job_batches")
