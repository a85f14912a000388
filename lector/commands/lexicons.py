"""``lector lexicons``: an account's pronunciation lexicons (W3C PLS) from a terminal.

A client of ``/v1/lexicons``, like ``lector jobs``: the same ``--url`` and ``--key`` (or
``LECTOR_API_URL`` / ``LECTOR_API_KEY``, or what ``make run`` recorded).
"""

from __future__ import annotations

from pathlib import Path

import typer

from lector.commands.common import print_table
from lector.commands.jobs import KeyOpt, UrlOpt, _check, _client

app = typer.Typer(no_args_is_help=True)


@app.command("put")
def put(
    name: str = typer.Argument(..., help="the lexicon's name"),
    document: Path = typer.Argument(..., exists=True, readable=True, help="a PLS 1.0 file (.pls or .xml)"),
    default: bool = typer.Option(None, "--default/--no-default", help="used by requests that name no lexicon"),
    url: str = UrlOpt,
    key: str = KeyOpt,
) -> None:
    """Store DOCUMENT as the next version of lexicon NAME; prints its version."""
    params = {"default": "true" if default else "false"} if default is not None else {}
    with _client(url, key) as client:
        stored = _check(client.put(f"/v1/lexicons/{name}", content=document.read_bytes(), params=params,
                                   headers={"Content-Type": "application/pls+xml"}))
    typer.echo(f"{stored['name']} version {stored['version']}: {stored['lexemes']} lexemes ({stored['lang']})")


@app.command("list")
def list_(url: str = UrlOpt, key: str = KeyOpt) -> None:
    """The account's lexicons, newest version of each."""
    with _client(url, key) as client:
        lexicons = _check(client.get("/v1/lexicons"))["lexicons"]
    print_table(["name", "version", "lang", "lexemes", "default"],
                [[x["name"], str(x["version"]), x["lang"], str(x["lexemes"]), "yes" if x["default"] else ""] for x in lexicons])


@app.command("get")
def get(
    name: str = typer.Argument(...),
    version: int = typer.Option(None, "--version", help="an older version; the newest by default"),
    url: str = UrlOpt,
    key: str = KeyOpt,
) -> None:
    """Print a lexicon's PLS document."""
    with _client(url, key) as client:
        found = _check(client.get(f"/v1/lexicons/{name}", params={"version": version} if version else {}))
    typer.echo(found["content"])


@app.command("delete")
def delete(name: str = typer.Argument(...), url: str = UrlOpt, key: str = KeyOpt) -> None:
    """Remove every version of lexicon NAME."""
    with _client(url, key) as client:
        response = client.delete(f"/v1/lexicons/{name}")
        if response.status_code != 204:
            _check(response)
    typer.echo(f"deleted {name}")
