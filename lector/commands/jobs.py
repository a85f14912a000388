"""``lector jobs``: a client of the job API, for people rendering books from a terminal.

Talks HTTP to a running lector (``--url`` / ``LECTOR_API_URL``, key from ``--key`` /
``LECTOR_API_KEY``, else the dev key ``make run`` wrote; read by ``ClientSettings``), exactly as
any customer would.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from lector.settings import ClientSettings

app = typer.Typer(no_args_is_help=True)
console = Console(stderr=True)
TERMINAL = {"succeeded", "failed", "canceled"}


def _client(url: str | None, key: str | None) -> httpx.Client:
    settings = ClientSettings()
    base = url or settings.api_url
    token = key or (settings.api_key.get_secret_value() if settings.api_key else None)
    if not token:
        dev = settings.data_dir / "dev-api-key"
        token = dev.read_text().strip() if dev.exists() else ""
    if not token:
        raise typer.BadParameter("no API key: pass --key or set LECTOR_API_KEY")
    return httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60)


def _check(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        console.print(f"[red]{response.status_code}[/red] {response.text}")
        raise typer.Exit(1)
    return response.json()


UrlOpt = typer.Option(None, "--url", help="API base URL")
KeyOpt = typer.Option(None, "--key", help="API key")


@app.command()
def submit(
    book: Path = typer.Argument(..., exists=True, readable=True, help=".txt, .md or .epub file"),
    speaker: str = typer.Option("joe"),
    model: str = typer.Option(None, "--model"),
    lang: str = typer.Option(None),
    fmt: str = typer.Option("mp3", "--format", help="mp3, opus, wav, flac or m4b"),
    sampling_rate: int = typer.Option(None, "--sampling-rate"),
    title: str = typer.Option(None),
    author: str = typer.Option(None),
    skip_front_matter: bool = typer.Option(False, "--skip-front-matter", help="skip Gutenberg header, title page, contents"),
    webhook: str = typer.Option(None, "--webhook"),
    idempotency_key: str = typer.Option(None, "--idempotency-key"),
    wait: bool = typer.Option(False, "--wait", help="show progress until the job ends"),
    url: str = UrlOpt,
    key: str = KeyOpt,
) -> None:
    """Submit BOOK as a job (uploaded as a file); prints the job id (alone on the last line)."""
    fields: dict[str, str] = {"speaker": speaker, "format": fmt}
    for name, value in (
        ("modelId", model),
        ("lang", lang),
        ("samplingRate", str(sampling_rate) if sampling_rate else None),
        ("title", title),
        ("author", author),
        ("webhookUrl", webhook),
        ("skipFrontMatter", "true" if skip_front_matter else None),
    ):
        if value:
            fields[name] = value
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
    with _client(url, key) as client, book.open("rb") as handle:
        files = {"file": (book.name, handle, _MEDIA_TYPES.get(book.suffix.lower(), "text/plain"))}
        job = _check(client.post("/v1/jobs", data=fields, files=files, headers=headers))
        if wait:
            job = _follow(client, job["id"])
    print(job["id"])  # noqa: T201 - the one machine-readable line
    if wait and job["status"] != "succeeded":
        raise typer.Exit(1)


_MEDIA_TYPES = {".epub": "application/epub+zip", ".md": "text/markdown", ".markdown": "text/markdown"}


def _follow(client: httpx.Client, job_id: str) -> dict[str, Any]:
    started = time.monotonic()
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} chunks"),
        TextColumn("{task.fields[rtf]}"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as progress:
        task = progress.add_task("queued", total=None, rtf="")
        while True:
            job = _check(client.get(f"/v1/jobs/{job_id}"))
            done, total = job["progress"]["chunksDone"], job["progress"]["chunksTotal"]
            elapsed = time.monotonic() - started
            audio = job["progress"].get("audioSeconds") or job.get("durationSeconds") or 0
            rtf = f"{audio / elapsed:.1f}x realtime" if audio and elapsed else ""
            progress.update(task, description=job["status"], completed=done, total=total or None, rtf=rtf)
            if job["status"] in TERMINAL:
                return job
            time.sleep(1.0)


@app.command("get")
def get_(job_id: str, url: str = UrlOpt, key: str = KeyOpt) -> None:
    """Print a job as JSON."""
    with _client(url, key) as client:
        print(json.dumps(_check(client.get(f"/v1/jobs/{job_id}")), indent=2))  # noqa: T201


@app.command("list")
def list_(limit: int = 20, url: str = UrlOpt, key: str = KeyOpt) -> None:
    """The newest jobs of the key's account."""
    with _client(url, key) as client:
        jobs = _check(client.get("/v1/jobs", params={"limit": limit}))["jobs"]
    table = Table("id", "status", "chars", "chunks", "audio s", "created")
    for job in jobs:
        p = job["progress"]
        table.add_row(
            job["id"],
            job["status"],
            str(job["characters"]),
            f"{p['chunksDone']}/{p['chunksTotal']}",
            f"{job['durationSeconds'] or 0:.1f}",
            job["createdAt"] or "",
        )
    Console().print(table)


@app.command()
def cancel(job_id: str, url: str = UrlOpt, key: str = KeyOpt) -> None:
    """Cancel a job; no further chunk is synthesized or billed."""
    with _client(url, key) as client:
        console.print(_check(client.delete(f"/v1/jobs/{job_id}"))["status"])


@app.command()
def download(
    job_id: str,
    out: Path = typer.Argument(...),
    subtitles: str = typer.Option(None, "--subtitles", help="srt or vtt: save the subtitles instead of the audio"),
    url: str = UrlOpt,
    key: str = KeyOpt,
) -> None:
    """Save a finished job's audio (or its subtitles) to OUT."""
    path = f"/v1/jobs/{job_id}/subtitles.{subtitles}" if subtitles else f"/v1/jobs/{job_id}/audio"
    with _client(url, key) as client:
        response = client.get(path, follow_redirects=False)
        if response.status_code in (302, 303, 307):
            response = httpx.get(response.headers["location"], timeout=300)
        if response.status_code >= 400:
            console.print(f"[red]{response.status_code}[/red] {response.text}")
            raise typer.Exit(1)
        out.write_bytes(response.content)
    console.print(f"wrote {out} ({len(response.content)} bytes)")
