"""``lector jobs``: a client of the job API, for people rendering books from a terminal.

Talks HTTP to a running lector, exactly as any customer would: ``--url`` / ``LECTOR_API_URL``,
else the API that ``make run`` recorded (``.lector/run.json``), else
``http://LECTOR_HOST:LECTOR_PORT``; the key from ``--key`` / ``LECTOR_API_KEY``, else the dev key
``make run`` wrote (all read by ``ClientSettings``). A service that cannot be reached is one line on stderr, not a traceback.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from lector import runfile
from lector.settings import ClientSettings
from store.status import TERMINAL, JobStatus

app = typer.Typer(no_args_is_help=True)
console = Console(stderr=True)
SHORT = 8  # characters of a job id that `jobs list` shows and get, cancel and download accept


def api_url(settings: ClientSettings) -> str:
    """``LECTOR_API_URL``, else what ``make run`` recorded, else ``LECTOR_HOST:LECTOR_PORT``."""
    if settings.api_url:
        return settings.api_url.rstrip("/")
    record = runfile.read(settings.data_dir)
    if record is not None:
        return record.api_url
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "", "::") else settings.host
    return f"http://{host}:{settings.port}"


@contextmanager
def _client(url: str | None, key: str | None) -> Iterator[httpx.Client]:
    client = _http_client(url, key)
    with reachable(str(client.base_url)), client:
        yield client


def _http_client(url: str | None, key: str | None) -> httpx.Client:
    settings = ClientSettings()
    base = url or api_url(settings)
    token = key or (settings.api_key.get_secret_value() if settings.api_key else None)
    if not token:
        dev = settings.data_dir / "dev-api-key"
        token = dev.read_text().strip() if dev.exists() else ""
    if not token:
        raise typer.BadParameter("no API key: pass --key or set LECTOR_API_KEY")
    return httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60)


@contextmanager
def reachable(base_url: str) -> Iterator[None]:
    """An unreachable service is one line on stderr and exit status 1, not a traceback."""
    try:
        yield
    except httpx.TransportError as error:
        reason = str(error) or type(error).__name__
        console.print(f"[red]cannot reach lector at {base_url}:[/red] {reason} "
                      "(is it running? `make run` starts it; --url or LECTOR_API_URL point elsewhere)",
                      highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None


def _check(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        console.print(f"[red]{response.status_code}[/red] {response.text}")
        raise typer.Exit(1)
    return response.json()


UrlOpt = typer.Option(None, "--url", help="API base URL")
KeyOpt = typer.Option(None, "--key", help="API key")


@app.command()
def submit(
    book: Path = typer.Argument(..., exists=True, readable=True, help=".txt, .md, .ssml or .epub file"),
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
    lexicon: list[str] = typer.Option(None, "--lexicon", help="a lexicon to use (repeat for several); default: the account's"),
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
        ("lexicons", ",".join(lexicon) if lexicon else None),
    ):
        if value:
            fields[name] = value
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
    with _client(url, key) as client, book.open("rb") as handle:
        files = {"file": (book.name, handle, _MEDIA_TYPES.get(book.suffix.lower(), "text/plain"))}
        job = _check(client.post("/v1/jobs", data=fields, files=files, headers=headers))
        if wait:
            job = _follow(client, job["id"])
    if wait and job["status"] == JobStatus.SUCCEEDED:
        reused = f" ({job['reusedCharacters']:,} more reused, not billed again)" if job.get("reusedCharacters") else ""
        console.print(f"done: {job['billedCharacters'] if job.get('billedCharacters') is not None else job['characters']:,} "
                      f"characters billed{reused}, {job.get('durationSeconds') or 0:.0f} s of audio. Download it with:\n"
                      f"  lector jobs download {job['id'][:SHORT]} {_suggested_name(book, fmt)}", highlight=False,
                      soft_wrap=True)
    elif wait:
        console.print(f"[red]{job['status']}[/red] {job.get('error') or ''}", highlight=False)
    print(job["id"])  # noqa: T201 - the one machine-readable line
    if wait and job["status"] != JobStatus.SUCCEEDED:
        raise typer.Exit(1)


def _suggested_name(book: Path, fmt: str) -> str:
    return f"{book.stem}.{fmt}"


_MEDIA_TYPES = {".epub": "application/epub+zip", ".md": "text/markdown", ".markdown": "text/markdown",
                ".ssml": "application/ssml+xml"}


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
            job: dict[str, Any] = _check(client.get(f"/v1/jobs/{job_id}"))
            done, total = job["progress"]["chunksDone"], job["progress"]["chunksTotal"]
            elapsed = time.monotonic() - started
            audio = job["progress"].get("audioSeconds") or job.get("durationSeconds") or 0
            rtf = f"{audio / elapsed:.1f}x realtime" if audio and elapsed else ""
            progress.update(task, description=job["status"], completed=done, total=total or None, rtf=rtf)
            if job["status"] in TERMINAL:
                return job
            time.sleep(1.0)


def _resolve(client: httpx.Client, job_id: str) -> str:
    """A whole job id as given, or the one job of the account whose id starts with ``job_id``
    (at least four characters, as ``jobs list`` shows them)."""
    if len(job_id) >= 32 or len(job_id) < 4:
        return job_id
    jobs = _check(client.get("/v1/jobs", params={"limit": 100}))["jobs"]
    matches = [job["id"] for job in jobs if job["id"].startswith(job_id.lower())]
    if len(matches) == 1:
        return str(matches[0])
    problem = "matches no job among the newest 100" if not matches else f"matches {len(matches)} jobs"
    console.print(f"[red]job id {job_id}[/red] {problem}: give more of it", highlight=False)
    raise typer.Exit(1)


@app.command("get")
def get_(job_id: str, url: str = UrlOpt, key: str = KeyOpt) -> None:
    """Print a job as JSON."""
    with _client(url, key) as client:
        print(json.dumps(_check(client.get(f"/v1/jobs/{_resolve(client, job_id)}")), indent=2))  # noqa: T201


@app.command("list")
def list_(limit: int = 20, url: str = UrlOpt, key: str = KeyOpt) -> None:
    """The newest jobs of the key's account."""
    with _client(url, key) as client:
        jobs = _check(client.get("/v1/jobs", params={"limit": limit}))["jobs"]
    table = Table("id", "status", "chars", "chunks", "audio s", "created")
    table.columns[0].no_wrap = True
    table.columns[0].min_width = 36  # whole ids: a cut one could not be pasted back
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
        console.print(_check(client.delete(f"/v1/jobs/{_resolve(client, job_id)}"))["status"])


@app.command()
def download(
    job_id: str,
    out: Path = typer.Argument(...),
    subtitles: str = typer.Option(None, "--subtitles", help="srt or vtt: save the subtitles instead of the audio"),
    url: str = UrlOpt,
    key: str = KeyOpt,
) -> None:
    """Save a finished job's audio (or its subtitles) to OUT."""
    with _client(url, key) as client:
        job_id = _resolve(client, job_id)
        path = f"/v1/jobs/{job_id}/subtitles.{subtitles}" if subtitles else f"/v1/jobs/{job_id}/audio"
        response = client.get(path, follow_redirects=False)
        if response.status_code in (302, 303, 307):
            response = httpx.get(response.headers["location"], timeout=300)
        if response.status_code >= 400:
            console.print(f"[red]{response.status_code}[/red] {response.text}")
            raise typer.Exit(1)
        out.write_bytes(response.content)
    console.print(f"wrote {out} ({len(response.content)} bytes)")
