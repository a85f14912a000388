"""A job's stored ``speed_alpha`` is a rate (above 1.0 faster) for every model: ``mistv2``'s,
stored until now as the vendor's length factor, becomes its inverse. The vendor rule moved to the
facade (``facade.vendor_controls``), which stores the rate at intake, so the job's steps read one
meaning. The change is its own inverse, so the downgrade is the same statement. Rows only.

Revision ID: 0005_speed_rates
Revises: 0004_qa_default
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005_speed_rates"
down_revision: str | None = "0004_qa_default"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INVERT_MISTV2_SPEED = """
UPDATE jobs
   SET params = jsonb_set(params, '{speed_alpha}', to_jsonb(1.0 / (params->>'speed_alpha')::double precision))
 WHERE params->>'model_id' = 'mistv2'
   AND jsonb_typeof(params->'speed_alpha') = 'number'
   AND (params->>'speed_alpha')::double precision > 0
"""


def upgrade() -> None:
    op.execute(INVERT_MISTV2_SPEED)


def downgrade() -> None:
    op.execute(INVERT_MISTV2_SPEED)
