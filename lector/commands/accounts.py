"""``lector accounts``: create, list, change the subscription or limits of, and disable accounts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import typer
from rich.console import Console

from lector.commands.common import (
    database_session,
    format_instant,
    parse_instant,
    print_table,
    reported_errors,
)
from lector.settings import Settings
from store import db

app = typer.Typer(help="Manage customer accounts.", no_args_is_help=True)


@app.command()
def create(
    name: str = typer.Argument(..., help="unique account name"),
    subscription_days: int | None = typer.Option(
        None, "--subscription-days", min=0, help="subscription length; omitted: no expiry"
    ),
) -> None:
    """Create an active account."""
    valid_until = None if subscription_days is None else datetime.now(UTC) + timedelta(days=subscription_days)
    with reported_errors(), database_session(Settings()) as session:
        account = db.create_account(session=session, name=name, subscription_valid_until=valid_until)
        Console().print(
            f"created account [bold]{account.name}[/bold] ({account.id}), "
            f"subscription until {format_instant(account.subscription_valid_until, 'no expiry')}",
            highlight=False,
            soft_wrap=True,
        )


@app.command("list")
def list_() -> None:
    """List every account."""
    with reported_errors(), database_session(Settings()) as session:
        rows = [
            (
                account.name,
                str(account.id),
                account.status,
                format_instant(account.subscription_valid_until, "no expiry"),
                ", ".join(account.allowed_models) if account.allowed_models is not None else "all",
                ", ".join(account.allowed_endpoints) if account.allowed_endpoints is not None else "all",
                str(account.ws_connections_per_minute),
                format_instant(account.created_at),
            )
            for account in db.list_accounts(session=session)
        ]
    print_table(
        ("name", "id", "status", "subscription until", "models", "endpoints", "ws/min", "created"), rows
    )


@app.command("set-subscription")
def set_subscription(
    name: str = typer.Argument(...),
    until: str | None = typer.Option(None, "--until", help="ISO date or date-time (UTC when naive)"),
    none: bool = typer.Option(False, "--none", help="no expiry"),
) -> None:
    """Set when the account's subscription ends (--until DATE), or remove the end (--none)."""
    if (until is None) == (not none):
        raise typer.BadParameter("give exactly one of --until DATE or --none")
    try:
        valid_until = None if none else parse_instant(until or "")
    except ValueError as error:
        raise typer.BadParameter(f"--until: {error}") from error
    with reported_errors(), database_session(Settings()) as session:
        account = db.set_subscription(session=session, name=name, valid_until=valid_until)
        Console().print(
            f"{account.name}: subscription until {format_instant(account.subscription_valid_until, 'no expiry')}",
            highlight=False,
            soft_wrap=True,
        )


@app.command("set-limits")
def set_limits(
    name: str = typer.Argument(...),
    models: str | None = typer.Option(None, "--models", help="comma-separated modelIds; omitted: all"),
    endpoints: str | None = typer.Option(None, "--endpoints", help="comma-separated endpoints; omitted: all"),
    ws_per_minute: int = typer.Option(60, "--ws-per-minute", min=0, help="WebSocket connections per minute"),
) -> None:
    """Replace the account's limits (options left out mean "all allowed" / the default rate)."""

    def split(value: str | None) -> list[str] | None:
        return None if value is None else [item.strip() for item in value.split(",") if item.strip()]

    with reported_errors(), database_session(Settings()) as session:
        account = db.set_limits(
            session=session,
            name=name,
            allowed_models=split(models),
            allowed_endpoints=split(endpoints),
            ws_connections_per_minute=ws_per_minute,
        )
        Console().print(f"{account.name}: limits updated", highlight=False, soft_wrap=True)


@app.command("qa")
def qa_default(
    name: str = typer.Argument(...),
    enabled: bool = typer.Option(..., "--on/--off", help="the speech-recognition check for jobs that do not say"),
) -> None:
    """Set the account's default for "qa" (the speech-recognition check of every book); a job's
    own "qa" still wins."""
    with reported_errors(), database_session(Settings()) as session:
        account = db.set_qa_default(session=session, name=name, enabled=enabled)
        Console().print(f"{account.name}: qa {'on' if account.qa_default else 'off'} by default", highlight=False, soft_wrap=True)


@app.command()
def disable(name: str = typer.Argument(...)) -> None:
    """Disable an account: its keys stop authenticating ("invalid subscription")."""
    with reported_errors(), database_session(Settings()) as session:
        account = db.disable_account(session=session, name=name)
        Console().print(f"{account.name}: disabled", highlight=False, soft_wrap=True)


@app.command("webhook-secret")
def webhook_secret(name: str = typer.Argument(...)) -> None:
    """Print the account's webhook signing secret, alone on stdout.

    Job callbacks carry ``Lector-Signature: t=<unix>,v1=<hex>``: HMAC-SHA256 with this secret
    over ``"<t>." + body``. Customers verify it with this value (see scheduler/webhooks.verify)."""
    with reported_errors(), database_session(Settings()) as session:
        secret = db.get_account_by_name(session=session, name=name).webhook_secret
    typer.echo(secret)
