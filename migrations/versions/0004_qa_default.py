"""Accounts choose whether their jobs get the speech-recognition check by default
(``accounts.qa_default``; a job's own ``"qa"`` still wins).

Revision ID: 0004_qa_default
Revises: 0003_lexicons
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_qa_default"
down_revision: str | None = "0003_lexicons"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("accounts", sa.Column("qa_default", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    op.drop_column("accounts", "qa_default")
