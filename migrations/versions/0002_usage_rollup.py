"""Usage rollup: ``usage_daily``, kept exact by triggers on ``usage``; a BRIN index on usage time.

Why triggers and not a second statement in ``record_usage``: the rule "the rollup equals the sum
of the raw rows" then holds for every writer (``record_usage``, a bulk ``COPY``, a correction
typed in psql, a key deleted under ``ON DELETE SET NULL``), in the writer's own transaction, with
no extra round trip on the streaming path. They are statement-level triggers over transition
tables: a multi-row insert is summed once per slot, and an ``INSERT ... ON CONFLICT DO NOTHING``
that lost a race has an empty transition table, so a chunk billed once is counted once.

Days are UTC days. The upgrade locks ``usage`` against writes (reads go on) while it backfills,
so no row can slip between the backfill's snapshot and the triggers' creation.

Revision ID: 0002
Revises: 0001
Create Date: 2026-01-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The slot a usage row is summed into, in the unique constraint's column order (also the order
# rows are upserted in, so that concurrent multi-slot writers lock slots in one order).
SLOT = ("account_id", "day", "model", "speaker", "transport", "lang", "api_key_id")
SUMS = ("row_count", "characters", "audio_seconds")
DAY = "(created_at AT TIME ZONE 'UTC')::date"


def _aggregate(source: str) -> str:
    """``SELECT`` one row per slot with its sums, from a table of usage rows."""
    columns = ", ".join(DAY if c == "day" else c for c in SLOT)
    positions = ", ".join(str(i + 1) for i in range(len(SLOT)))
    return (
        f"SELECT {columns}, count(*), sum(characters), sum(audio_seconds) "
        f"FROM {source} GROUP BY {positions} ORDER BY {positions}"
    )


def _upsert(source: str) -> str:
    slot, sums = ", ".join(SLOT), ", ".join(SUMS)
    added = ", ".join(f"{c} = d.{c} + EXCLUDED.{c}" for c in SUMS)
    return (
        f"INSERT INTO usage_daily AS d ({slot}, {sums}) {_aggregate(source)} "
        f"ON CONFLICT ({slot}) DO UPDATE SET {added}"
    )


def _backfill() -> str:
    """The rows already there, summed into the (new, empty, and until commit private) rollup."""
    return f"INSERT INTO usage_daily ({', '.join(SLOT)}, {', '.join(SUMS)}) {_aggregate('usage')}"


def _slot_match(left: str, right: str) -> str:
    return " AND ".join(f"{left}.{c} IS NOT DISTINCT FROM {right}.{c}" for c in SLOT)


_FUNCTION = f"""
CREATE FUNCTION usage_daily_apply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    emptied bigint[];
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM usage_daily;
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        WITH gone ({", ".join(SLOT)}, n, c, s) AS ({_aggregate("old_rows")}),
        moved AS (
            UPDATE usage_daily AS d
            SET row_count = d.row_count - g.n, characters = d.characters - g.c,
                audio_seconds = d.audio_seconds - g.s
            FROM gone AS g
            WHERE {_slot_match("d", "g")}
            RETURNING d.id, d.row_count
        )
        SELECT array_agg(id) FILTER (WHERE row_count = 0) INTO emptied FROM moved;
        DELETE FROM usage_daily WHERE id = ANY (emptied);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        {_upsert("new_rows")};
    END IF;
    RETURN NULL;
END
$$
"""

_TRIGGERS = {
    "usage_rollup_insert": "AFTER INSERT ON usage REFERENCING NEW TABLE AS new_rows",
    "usage_rollup_update": "AFTER UPDATE ON usage REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
    "usage_rollup_delete": "AFTER DELETE ON usage REFERENCING OLD TABLE AS old_rows",
    "usage_rollup_truncate": "AFTER TRUNCATE ON usage",
}


def upgrade() -> None:
    op.create_table(
        "usage_daily",
        sa.Column("id", sa.BigInteger(), sa.Identity(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("account_id", sa.Uuid(), nullable=False),
        sa.Column("api_key_id", sa.Uuid(), nullable=True),
        sa.Column("transport", sa.String(8), nullable=False),
        sa.Column("model", sa.String(64), nullable=False),
        sa.Column("speaker", sa.String(128), nullable=False),
        sa.Column("lang", sa.String(16), nullable=True),
        sa.Column("row_count", sa.BigInteger(), nullable=False),
        sa.Column("characters", sa.BigInteger(), nullable=False),
        sa.Column("audio_seconds", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_usage_daily")),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"], name=op.f("fk_usage_daily_account_id_accounts")),
        sa.CheckConstraint("transport IN ('http', 'ws', 'job')", name=op.f("ck_usage_daily_transport")),
    )
    # Every write to a slot is an update of its row: room on the page keeps those updates HOT.
    op.execute("ALTER TABLE usage_daily SET (fillfactor = 80)")
    op.create_index(op.f("ix_usage_created_at"), "usage", ["created_at"], postgresql_using="brin")

    # Writers wait from here to the commit (readers do not): 10 million rows take minutes.
    op.execute("LOCK TABLE usage IN SHARE ROW EXCLUSIVE MODE")
    op.execute("SET LOCAL work_mem = '256MB'")  # one big GROUP BY, once (LOCAL: until the commit)
    op.execute("SET LOCAL maintenance_work_mem = '512MB'")
    op.execute(_backfill())
    # Indexes built once over the filled table are far cheaper than maintained row by row.
    op.create_unique_constraint("uq_usage_daily_slot", "usage_daily", list(SLOT), postgresql_nulls_not_distinct=True)
    op.create_index(op.f("ix_usage_daily_day"), "usage_daily", ["day"])
    op.execute(_FUNCTION)
    for name, when in _TRIGGERS.items():
        op.execute(f"CREATE TRIGGER {name} {when} FOR EACH STATEMENT EXECUTE FUNCTION usage_daily_apply()")


def downgrade() -> None:
    for name in _TRIGGERS:
        op.execute(f"DROP TRIGGER {name} ON usage")
    op.execute("DROP FUNCTION usage_daily_apply()")
    op.drop_index(op.f("ix_usage_created_at"), table_name="usage")
    op.drop_index(op.f("ix_usage_daily_day"), table_name="usage_daily")
    op.drop_table("usage_daily")
