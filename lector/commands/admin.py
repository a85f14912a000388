"""``lector admin``: billing reports straight from the database (the admin API's ``/admin/usage``
without HTTP). Days and months are UTC; totals equal the sum of the raw usage rows."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from enum import StrEnum

import typer

from lector.commands.common import database_session, parse_instant, print_table, reported_errors
from lector.settings import Settings
from store import db
from store.db.reports import (
    DIMENSIONS,
    MEASURES,
    month_start,
    parse_group_by,
    report_csv,
    report_document,
    usage_report,
)

app = typer.Typer(help="Admin reports.", no_args_is_help=True)


@app.callback()
def admin() -> None:
    """Admin reports (a group even with one command, so the CLI reads ``lector admin usage``)."""


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


def _instant(value: str, option: str) -> datetime:
    try:
        return parse_instant(value)
    except ValueError as error:
        raise typer.BadParameter(f"{option}: {error}") from error


@app.command()
def usage(
    start: str | None = typer.Option(
        None, "--from", help="ISO date or date-time, inclusive (UTC when naive); default: the start of this UTC month"
    ),
    end: str | None = typer.Option(None, "--to", help="ISO date or date-time, exclusive; default: now"),
    account: str | None = typer.Option(None, "--account", help="account name; default: every account"),
    group_by: str = typer.Option(
        "day", "--group-by", help=f"one or more of {', '.join(DIMENSIONS)}, comma-separated"
    ),
    fmt: Format = typer.Option(Format.table, "--format", help="table, csv or json"),
) -> None:
    """Usage summed per group: rows (requests or job chunks), characters, audio seconds."""
    now = datetime.now(UTC)
    since = _instant(start, "--from") if start is not None else month_start(now)
    until = _instant(end, "--to") if end is not None else now
    try:
        dims = parse_group_by(group_by)
    except ValueError as error:
        raise typer.BadParameter(f"--group-by: {error}") from error
    if since >= until:
        raise typer.BadParameter("--from must be before --to")
    with reported_errors(), database_session(Settings()) as session:
        account_id = db.get_account_by_name(session=session, name=account).id if account else None
        rows = usage_report(session=session, account_id=account_id, start=since, end=until, group_by=dims)
    if fmt is Format.csv:
        typer.echo(report_csv(rows, dims), nl=False)
    elif fmt is Format.json:
        document = report_document(rows, account=account, start=since, end=until, group_by=dims)
        typer.echo(json.dumps(document, indent=2))
    else:
        lines = [
            [*("-" if v is None else v for v in row.group.values()), f"{row.rows:,}", f"{row.characters:,}",
             f"{row.audio_seconds:,.1f}"]
            for row in rows
        ]
        total = report_document(rows, account=account, start=since, end=until, group_by=dims)["total"]
        if dims:
            lines.append(["total", *[""] * (len(dims) - 1), f"{total['rows']:,}", f"{total['characters']:,}",
                          f"{total['audioSeconds']:,.1f}"])
        print_table([*dims, *MEASURES], lines)
