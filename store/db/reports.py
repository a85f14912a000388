"""Admin usage reports: who used what, when, at any scale, exactly.

Whole UTC days are read from ``usage_daily`` (the rollup kept exact by triggers on ``usage``,
migration 0002), so a month is a few thousand rows for one account and one index range for
everyone, however many raw rows lie behind them. Bounds that cut a day are not rounded: the
partial days at either end are summed from the raw rows (through the ``(account_id,
created_at)`` index for one account, the BRIN index on ``created_at`` for all), so every report
equals a direct ``SELECT sum(...)`` over ``usage`` for the same half-open interval
``start <= created_at < end``. Days and months are UTC.
"""

from __future__ import annotations

import csv
import io
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Final, TypedDict

from sqlalchemy import Date, Select, cast, func, literal, select, union_all
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from store.db.models import Account, ApiKey, Usage, UsageDaily
from store.errors import InvalidArgument

DIMENSIONS: Final = ("day", "month", "account", "key", "model", "speaker", "transport", "lang")
MEASURES: Final = ("rows", "characters", "audioSeconds")


@dataclass(frozen=True, slots=True)
class ReportRow:
    """One group: its dimension values (as text; ``None`` for a row without a key or language)
    and its sums. ``rows`` counts usage rows: requests for http/ws, chunks for jobs."""

    group: dict[str, str | None]
    rows: int
    characters: int
    audio_seconds: float

    def record(self) -> dict[str, object]:
        """The row as one flat mapping: the dimensions, then ``rows``, ``characters``, ``audioSeconds``."""
        seconds = round(self.audio_seconds, 3)  # recorded to the millisecond; hide float dust
        return {**self.group, "rows": self.rows, "characters": self.characters, "audioSeconds": seconds}


def parse_group_by(value: str | Sequence[str]) -> tuple[str, ...]:
    """``"day"``, ``"account,model"`` or a sequence of names: validated, in order, no repeats."""
    names = [n.strip() for n in value.split(",")] if isinstance(value, str) else [n.strip() for n in value]
    names = [n for n in names if n]
    unknown = [n for n in names if n not in DIMENSIONS]
    if unknown:
        raise InvalidArgument(f"groupBy must be among {', '.join(DIMENSIONS)}; got {', '.join(unknown)}")
    if len(set(names)) != len(names):
        raise InvalidArgument("groupBy names a dimension twice")
    return tuple(names)


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def _split(start: datetime, end: datetime) -> tuple[tuple[date, date] | None, list[tuple[datetime, datetime]]]:
    """Whole UTC days ``[first, stop)`` for the rollup, and the raw time ranges around them."""
    start_day = start.astimezone(UTC).date()
    first = start_day if start == _midnight(start_day) else start_day + timedelta(days=1)
    stop = end.astimezone(UTC).date()
    if first >= stop:
        return None, [(start, end)]
    edges = [(start, _midnight(first)), (_midnight(stop), end)]
    return (first, stop), [(a, b) for a, b in edges if a < b]


def _sources(
    start: datetime, end: datetime, account_id: uuid.UUID | None
) -> list[Select[Any]]:
    days, raw_ranges = _split(start, end)
    parts: list[Any] = []  # SELECTs of one shape: the rollup's days, the raw rows' edges
    if days is not None:
        rollup = select(
            UsageDaily.day.label("day"),
            UsageDaily.account_id.label("account_id"),
            UsageDaily.api_key_id.label("api_key_id"),
            UsageDaily.model.label("model"),
            UsageDaily.speaker.label("speaker"),
            UsageDaily.transport.label("transport"),
            UsageDaily.lang.label("lang"),
            UsageDaily.row_count.label("row_count"),
            UsageDaily.characters.label("characters"),
            UsageDaily.audio_seconds.label("audio_seconds"),
        ).where(UsageDaily.day >= days[0], UsageDaily.day < days[1])
        if account_id is not None:
            rollup = rollup.where(UsageDaily.account_id == account_id)
        parts.append(rollup)
    for lo, hi in raw_ranges:
        raw = select(
            cast(func.timezone("UTC", Usage.created_at), Date).label("day"),
            Usage.account_id.label("account_id"),
            Usage.api_key_id.label("api_key_id"),
            Usage.model.label("model"),
            Usage.speaker.label("speaker"),
            Usage.transport.label("transport"),
            Usage.lang.label("lang"),
            literal(1).label("row_count"),
            Usage.characters.label("characters"),
            Usage.audio_seconds.label("audio_seconds"),
        ).where(Usage.created_at >= lo, Usage.created_at < hi)
        if account_id is not None:
            raw = raw.where(Usage.account_id == account_id)
        parts.append(raw)
    return parts


def usage_report(
    *,
    session: Session,
    start: datetime,
    end: datetime,
    group_by: str | Sequence[str] = ("day",),
    account_id: uuid.UUID | None = None,
) -> list[ReportRow]:
    """Usage for ``start <= created_at < end`` (aware datetimes), summed per ``group_by``
    (names from ``DIMENSIONS``; empty: one total row), ordered by the groups.

    ``account`` is reported by name, ``key`` by its visible prefix, ``month`` as ``YYYY-MM``.
    """
    dims = parse_group_by(group_by)
    if start.tzinfo is None or end.tzinfo is None:
        raise InvalidArgument("report bounds must be timezone-aware")
    if start >= end:
        raise InvalidArgument("the report's start must be before its end")

    parts = _sources(start, end, account_id)
    source = (parts[0] if len(parts) == 1 else union_all(*parts)).subquery("u")
    by_id: dict[str, ColumnElement[Any]] = {
        "day": source.c.day,
        "month": cast(func.date_trunc("month", source.c.day), Date),
        "account": source.c.account_id,
        "key": source.c.api_key_id,
        "model": source.c.model,
        "speaker": source.c.speaker,
        "transport": source.c.transport,
        "lang": source.c.lang,
    }
    grouped_columns = [by_id[d].label(f"g_{d}") for d in dims]
    sums = (
        select(
            *grouped_columns,
            func.coalesce(func.sum(source.c.row_count), 0).label("n"),
            func.coalesce(func.sum(source.c.characters), 0).label("c"),
            func.coalesce(func.sum(source.c.audio_seconds), 0.0).label("s"),
        )
        .group_by(*grouped_columns)
        .subquery("t")
    )
    # Names are joined after summing, so the join touches one row per group, not per usage row.
    shown: list[Any] = []
    from_clause: Any = sums
    for d in dims:
        column = sums.c[f"g_{d}"]
        if d == "account":
            from_clause = from_clause.join(Account, Account.id == column)
            shown.append(Account.name)
        elif d == "key":
            from_clause = from_clause.outerjoin(ApiKey, ApiKey.id == column)
            shown.append(ApiKey.prefix)
        else:
            shown.append(column)
    query = select(*shown, sums.c.n, sums.c.c, sums.c.s).select_from(from_clause).order_by(*shown)
    result: list[ReportRow] = []
    for row in session.execute(query):
        values = [_text(d, v) for d, v in zip(dims, row[: len(dims)], strict=True)]
        result.append(
            ReportRow(
                group=dict(zip(dims, values, strict=True)),
                rows=int(row[-3]),
                characters=int(row[-2]),
                audio_seconds=float(row[-1]),
            )
        )
    return result


def _text(dimension: str, value: Any) -> str | None:
    if value is None:
        return None
    if dimension == "month":
        return f"{value:%Y-%m}"
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


class ReportTotal(TypedDict):
    rows: int
    characters: int
    audioSeconds: float


#: The JSON form of a report (``from`` is a keyword, hence the functional form).
ReportDocument = TypedDict(
    "ReportDocument",
    {
        "account": str | None, "from": str, "to": str, "groupBy": list[str],
        "rows": list[dict[str, object]], "total": ReportTotal,
    },
)


def report_records(rows: Sequence[ReportRow]) -> list[dict[str, object]]:
    return [row.record() for row in rows]


def report_document(
    rows: Sequence[ReportRow], *, account: str | None, start: datetime, end: datetime, group_by: Sequence[str]
) -> ReportDocument:
    """The JSON form shared by the admin API and ``lector admin usage --format json``."""
    return {
        "account": account,
        "from": start.astimezone(UTC).isoformat(),
        "to": end.astimezone(UTC).isoformat(),
        "groupBy": list(group_by),
        "rows": report_records(rows),
        "total": {
            "rows": sum(r.rows for r in rows),
            "characters": sum(r.characters for r in rows),
            "audioSeconds": round(sum(r.audio_seconds for r in rows), 3),
        },
    }


def report_csv(rows: Sequence[ReportRow], group_by: Sequence[str]) -> str:
    """CSV with a header line: the dimensions in order, then ``rows,characters,audioSeconds``.
    A missing key or language is an empty field."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*group_by, *MEASURES])
    for row in rows:
        writer.writerow(["" if v is None else v for v in row.record().values()])
    return buffer.getvalue()


def month_start(instant: datetime) -> datetime:
    """00:00 UTC on the first day of ``instant``'s UTC month: where a report without a start
    begins (the current month to date, as invoices count)."""
    utc = instant.astimezone(UTC) if instant.tzinfo is not None else instant.replace(tzinfo=UTC)
    return datetime(utc.year, utc.month, 1, tzinfo=UTC)
