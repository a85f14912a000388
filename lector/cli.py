"""The ``lector`` command: one entry point for every process and every admin chore."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import typer

from lector.commands import accounts, admin, jobs, keys, lexicons, model_server
from lector.commands import license as license_commands
from lector.settings import Settings

app = typer.Typer(no_args_is_help=True, add_completion=False, help="lector text-to-speech service")
app.add_typer(accounts.app, name="accounts", help="Customer accounts")
app.add_typer(keys.app, name="keys", help="API keys")
app.add_typer(jobs.app, name="jobs", help="Book jobs")
app.add_typer(lexicons.app, name="lexicons", help="Pronunciation lexicons (W3C PLS)")
app.add_typer(admin.app, name="admin", help="Admin reports")
app.add_typer(license_commands.app, name="license", help="Self-hosted licences (vendor side)")
app.command("model-server")(model_server.command)


def _logging(settings: Settings | None = None) -> None:
    from lector.logs import configure

    settings = settings or Settings()
    configure(settings.log_format, settings.log_level)


@app.command()
def run() -> None:
    """Start the whole service (API, workers, reaper) on local or embedded backends."""
    from lector.supervisor import run as supervise

    _logging()
    raise typer.Exit(supervise(Settings()))


@app.command()
def serve(
    host: str = typer.Option(None, help="default: LECTOR_HOST"),
    port: int = typer.Option(None, help="default: LECTOR_PORT"),
    self_hosted: bool = typer.Option(False, "--self-hosted", help="self-hosted API: POST /, /health; JSON WebSocket on --ws-port"),
    ws_port: int = typer.Option(None, help="self-hosted WebSocket port; default LECTOR_WS_PORT (8001)"),
) -> None:
    """Run the HTTP and WebSocket API (cloud mode, or the self-hosted shape with --self-hosted)."""
    import uvicorn

    from lector.logs import uvicorn_options

    settings = Settings()
    _logging(settings)
    if self_hosted:
        from lector.commands.selfhosted import serve_selfhosted

        raise typer.Exit(serve_selfhosted(settings, host=host, port=port, ws_port=ws_port))
    uvicorn.run(
        "lector.api:create_app_from_env",
        factory=True,
        host=host or settings.host,
        port=port or settings.port,
        log_level="info",
        ws="websockets",
        **uvicorn_options(settings.log_format),
    )


@app.command()
def worker(
    queues: str = typer.Option("synth,cpu,live", help="comma-separated queues (scheduler.queue.QUEUES)"),
    pool: str = typer.Option("solo", help="solo for GPU/torch work, threads for I/O"),
    concurrency: int = typer.Option(1),
    name: str = typer.Option("worker", help="the worker's name; NAME@HOST names the host too"),
    beat: bool = typer.Option(False, help="also run the periodic reaper"),
    per_gpu: bool = typer.Option(False, "--per-gpu", help="one process per visible GPU, each pinned to its device"),
    quiet: bool = typer.Option(False, "--quiet", help="no Celery banner (lector run prints one line per service)"),
    metrics_port: int = typer.Option(
        None, "--metrics-port", help="serve /metrics on this port (default LECTOR_WORKER_METRICS_PORT; --per-gpu: +1 per device)"
    ),
) -> None:
    """Run a Celery worker. GPU workers use one solo process per device (CUDA does not survive fork)."""
    if per_gpu:
        from lector import supervisor

        gpus = supervisor.gpu_count(Settings())
        if gpus > 1:
            argv = [str(Path(sys.executable).with_name("lector")), *sys.argv[1:]]
            if metrics_port is None and Settings().worker_metrics_port:  # the children must not share it
                argv += ["--metrics-port", str(Settings().worker_metrics_port)]
            raise typer.Exit(supervisor.run_children(supervisor.per_gpu_children(argv, name, gpus)))
    argv = [
        "worker", "--queues", queues, "--pool", pool, "--concurrency", str(concurrency),
        # name@host as given (a farm's hosts share one machine's hostname), else name@<hostname>.
        "--hostname", name if "@" in name else f"{name}@%h", "--loglevel", "INFO", "--without-gossip", "--without-mingle",
    ]
    settings = Settings()
    if beat:
        # The beat schedule is state: it lives in the data folder, not in the working directory.
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        argv += ["--beat", "--schedule", str(settings.data_dir / "celerybeat-schedule")]
    from celery.signals import setup_logging

    _logging(settings)
    if settings.env != "prod":  # dev and test setups run as whoever started them, root included
        warnings.filterwarnings("ignore", message="You're running the worker with superuser privileges")
    port = metrics_port if metrics_port is not None else settings.worker_metrics_port
    if port:
        from workers.metrics import serve

        serve(port, settings.host)
    if quiet or settings.log_format == "json":
        argv = ["--quiet", *argv]  # no banner (in JSON mode stdout carries JSON lines only)
    from lector.worker import make_worker_app

    # lector configures logging itself (text or JSON): connecting this signal stops Celery from
    # replacing the root logger's handlers.
    setup_logging.connect(lambda **_: _logging(settings), weak=False)
    make_worker_app(settings).worker_main(argv)


@app.command()
def migrate(revision: str = typer.Argument("head")) -> None:
    """Apply database migrations up to REVISION."""
    from lector.commands.common import database_url
    from store.db.migrate import upgrade

    upgrade(database_url(Settings()), revision)


def main() -> None:  # pragma: no cover - console script shim
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    app()
