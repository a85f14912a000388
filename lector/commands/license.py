"""``lector license keygen|issue|verify``: the vendor's side of self-hosted licences.

Keys are generated locally and the private key never leaves the file ``keygen`` writes (mode
0600). Deployments are given the public key (``LECTOR_LICENSE_PUBLIC_KEY``) and a licence token
(``LECTOR_LICENSE`` or ``LECTOR_LICENSE_FILE``).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import typer

from facade.license import (
    PREFIX,
    LicenseError,
    generate_keypair,
    issue,
    load_private_key,
    load_public_key,
    verify,
)
from lector.commands.common import format_instant, parse_instant
from lector.settings import Settings

app = typer.Typer(no_args_is_help=True, help="Self-hosted licences (vendor side)")


@app.command()
def keygen(
    out: Path = typer.Option(Path("."), help="folder for license-private.pem and license-public.txt"),
    force: bool = typer.Option(False, help="overwrite an existing key pair"),
) -> None:
    """Create an Ed25519 key pair; prints the public key for LECTOR_LICENSE_PUBLIC_KEY."""
    out.mkdir(parents=True, exist_ok=True)
    private_path, public_path = out / "license-private.pem", out / "license-public.txt"
    if private_path.exists() and not force:
        typer.echo(f"{private_path} exists; pass --force to replace it", err=True)
        raise typer.Exit(1)
    pem, public = generate_keypair()
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    public_path.write_text(public + "\n", encoding="ascii")
    typer.echo(public)


@app.command("issue")
def issue_command(
    customer: str = typer.Option(..., help="who the licence is for"),
    key: Path = typer.Option(Path("license-private.pem"), help="the vendor's private key"),
    expires: str = typer.Option(None, help="ISO date or date-time (UTC when naive)"),
    days: int = typer.Option(365, help="validity from now, when --expires is not given"),
    model: list[str] = typer.Option(None, "--model", help="allowed modelId (repeat); none: every model"),
    out: Path = typer.Option(None, help="write the licence to this file instead of stdout"),
) -> None:
    """Sign a licence for CUSTOMER."""
    until = parse_instant(expires) if expires else datetime.now(UTC) + timedelta(days=days)
    token = issue(load_private_key(key.read_bytes()), customer=customer, expires=until, models=model or None)
    if out is not None:
        out.write_text(token + "\n", encoding="ascii")
        typer.echo(f"licence for {customer} until {format_instant(until)} written to {out}")
    else:
        typer.echo(token)


@app.command("verify")
def verify_command(
    licence: str = typer.Argument(None, help="a licence token or a file holding one; default: LECTOR_LICENSE(_FILE)"),
    public_key: str = typer.Option(None, help="base64 public key; default: LECTOR_LICENSE_PUBLIC_KEY"),
) -> None:
    """Check a licence offline; exit status 1 when it is not valid now."""
    settings = Settings()
    token = licence
    if token is not None and not token.startswith(PREFIX + ".") and Path(token).is_file():
        token = Path(token).read_text(encoding="ascii").strip()
    if token is None:
        if settings.license is not None:
            token = settings.license.get_secret_value()
        elif settings.license_file is not None and settings.license_file.is_file():
            token = settings.license_file.read_text(encoding="ascii").strip()
    key_text = public_key or settings.license_public_key
    try:
        lic = verify(token, load_public_key(key_text) if key_text else None)
    except LicenseError as exc:
        typer.echo(f"not valid: {exc}", err=True)
        raise typer.Exit(1) from exc
    models = ", ".join(lic.models) if lic.models is not None else "all"
    typer.echo(f"valid: {lic.customer}, until {format_instant(lic.expires)}, models: {models}, id {lic.id}")
