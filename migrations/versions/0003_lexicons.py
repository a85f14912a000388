"""Pronunciation lexicons (W3C PLS 1.0): one row per version of an account's named lexicon.

Revision ID: 0003_lexicons
Revises: 0002
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_lexicons"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "lexicons",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("account_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("lang", sa.String(length=8), nullable=False),
        sa.Column("lexemes", sa.Integer(), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("is_default", sa.Boolean(), server_default="false", nullable=False),
        sa.Column("created_at", sa.TIMESTAMP(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"], name=op.f("fk_lexicons_account_id_accounts"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lexicons")),
        sa.UniqueConstraint("account_id", "name", "version", name=op.f("uq_lexicons_account_id_name_version")),
    )
    op.create_index(op.f("ix_lexicons_account_id"), "lexicons", ["account_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_lexicons_account_id"), table_name="lexicons")
    op.drop_table("lexicons")
