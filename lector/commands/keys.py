"""``lector keys``: issue, list and revoke API keys. A key's plaintext is shown once, at creation."""

from __future__ import annotations

import typer
from rich.console import Console

from lector.commands.common import database_session, format_instant, print_table, reported_errors
from lector.settings import Settings
from store import db
from store.db.keys import VISIBLE_PREFIX_CHARS

app = typer.Typer(help="Manage API keys.", no_args_is_help=True)


@app.command()
def create(
    account: str = typer.Option(..., "--account", help="account name"),
    name: str | None = typer.Option(None, "--name", help="a label for the key"),
) -> None:
    """Issue a key. The plaintext is printed alone on the last line of stdout (for scripts)."""
    with reported_errors(), database_session(Settings()) as session:
        owner = db.get_account_by_name(session=session, name=account)
        api_key, plaintext = db.create_key(session=session, account_id=owner.id, name=name)
        label, prefix = api_key.name, api_key.prefix
    # Printed only after the commit succeeded: a key shown is a key that works.
    Console(stderr=True).print("Store this key now; it cannot be shown again.", style="yellow")
    Console().print(f"key {prefix}… ({label}) for account {account}", highlight=False, soft_wrap=True)
    typer.echo(plaintext)


@app.command("list")
def list_(account: str = typer.Option(..., "--account", help="account name")) -> None:
    """List an account's keys (prefixes only)."""
    with reported_errors(), database_session(Settings()) as session:
        owner = db.get_account_by_name(session=session, name=account)
        rows = [
            (
                api_key.prefix,
                api_key.name,
                format_instant(api_key.created_at),
                format_instant(api_key.last_used_at, "never"),
                format_instant(api_key.revoked_at, "no"),
            )
            for api_key in db.list_keys(session=session, account_id=owner.id)
        ]
    print_table(("prefix", "name", "created", "last used", "revoked"), rows)


@app.command()
def revoke(prefix: str = typer.Argument(..., help="the key's visible prefix (first 12 characters)")) -> None:
    """Revoke a key by its prefix (or the whole key); it stops authenticating at once."""
    with reported_errors(), database_session(Settings()) as session:
        api_key = db.revoke_key(session=session, prefix=prefix[:VISIBLE_PREFIX_CHARS])
        Console().print(f"revoked {api_key.prefix} ({api_key.name})", highlight=False, soft_wrap=True)
