"""Query parameters shared by the usage reports: the admin's (``/admin/usage``) and the
customer's own (``/v1/usage``), so both read dates, ``groupBy`` and ``Accept`` the same way and
answer the same figures."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from facade import errors as e
from store.db.reports import month_start, parse_group_by


def instant(value: Any, name: str) -> datetime:
    """An ISO 8601 date or date-time; naive means UTC, a bare date is 00:00 UTC."""
    if not isinstance(value, str):
        raise e.ApiError(400, f"{name} must be an ISO 8601 date or date-time")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        try:
            parsed = datetime.combine(date.fromisoformat(value), datetime.min.time())
        except ValueError:
            raise e.ApiError(400, f"{name} must be an ISO 8601 date or date-time") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def wants_csv(accept: str | None) -> bool:
    """Whether ``Accept`` names ``text/csv`` (with a q above 0); anything else gets JSON."""
    for part in (accept or "").split(","):
        media, *params = (p.strip() for p in part.split(";"))
        if media.lower() != "text/csv":
            continue
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    return float(value) > 0
                except ValueError:
                    return False
        return True
    return False


def report_window(query: Any, now: datetime) -> tuple[datetime, datetime, tuple[str, ...]]:
    """``from`` (default: the start of the current UTC month), ``to`` (default: now) and
    ``groupBy`` (default: day), checked: without either, the month to date."""
    start = instant(query["from"], "from") if query.get("from") else month_start(now)
    end = instant(query["to"], "to") if query.get("to") else now
    group_by = parse_group_by(query.get("groupBy", "day"))  # InvalidArgument: the table's 400
    if start >= end:
        raise e.ApiError(400, "from must be before to")
    return start, end, group_by
