"""``lector run``: the whole service in the foreground on one machine.

Resolves (or starts) PostgreSQL and Redis, applies migrations, makes sure a dev account and key
exist so a newcomer can curl it at once, then runs the API, a GPU-queue worker, a CPU-queue worker
with the periodic reaper and the live playlist's worker, each in its own process group. ``lector.children`` keeps them alive: a
child that dies is restarted (with backoff, at most ``restart_limit_per_minute`` times a minute)
and, when it was a worker, the unfinished jobs are re-sent at once (``resume_jobs``). Ctrl-C
stops everything it started, also when pressed twice.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TypedDict

from sqlalchemy.exc import OperationalError

from lector import runfile
from lector.backends import Backends, resolve
from lector.children import Supervisor, supervise
from lector.settings import Settings

log = logging.getLogger("lector.supervisor")


def child_env(settings: Settings, backends: Backends) -> dict[str, str]:
    env = dict(os.environ)
    env["LECTOR_DATABASE_URL"] = backends.database_url
    env["LECTOR_REDIS_URL"] = backends.redis_url
    env["LECTOR_DATA_DIR"] = str(settings.data_dir.resolve())
    return env


def _bin(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def gpu_count(settings: Settings) -> int:
    """CUDA devices a synth worker may take (0 on CPU, or when ``LECTOR_DEVICE=cpu``)."""
    if settings.device == "cpu":
        return 0
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def commands(settings: Settings, gpus: int = 0) -> dict[str, tuple[list[str], dict[str, str]]]:
    """The processes of ``lector run``: name -> (argv, environment overrides).

    One solo synth worker per GPU, each seeing only its own device (CUDA does not survive fork,
    and one process per device keeps every device busy); one on the CPU when there is none.

    The live playlist's segments (queue ``live``) get a worker of their own, one thread: Celery
    gives a worker one pool for all its queues, so on the ``cpu`` worker a new job's plan waited
    behind segment tasks and the segments behind an assembly. One thread is enough on one
    machine: one maker per job runs at a time anyway (``scheduler.hls``), and it levels and encodes
    at 100-160 times real time, so it keeps up with every book a CPU synth worker renders; a
    second thread would only take cores from synthesis. The cost is one more idle Python process."""
    lector = _bin("lector")
    synth = [lector, "worker", "--queues", "synth", "--pool", "solo", "--quiet"]
    workers: dict[str, tuple[list[str], dict[str, str]]] = (
        {
            f"worker-synth-gpu{i}": (
                [*synth, "--name", f"synth-gpu{i}"], {"CUDA_VISIBLE_DEVICES": str(i), "LECTOR_DEVICE": "cuda"}
            )
            for i in range(gpus)
        }
        if gpus
        else {"worker-synth": ([*synth, "--name", "synth"], {})}
    )
    return {
        "api": ([lector, "serve", "--host", settings.host, "--port", str(settings.port)], {}),
        **workers,
        "worker-cpu": (
            [lector, "worker", "--queues", "cpu", "--pool", "threads", "--concurrency", "2", "--name", "cpu", "--beat",
             "--quiet"],
            {},
        ),
        "worker-live": (
            [lector, "worker", "--queues", "live", "--pool", "threads", "--concurrency", "1", "--name", "live", "--quiet"],
            {},
        ),
    }


def per_gpu_children(argv: list[str], name: str, gpus: int) -> list[tuple[list[str], dict[str, str]]]:
    """``lector worker --per-gpu``: the same worker once per device, each pinned to it."""
    base = [a for a in argv if a != "--per-gpu"]
    port = None
    for option in ("--name", "--metrics-port"):
        if option in base:
            at = base.index(option)
            if option == "--metrics-port":
                port = int(base[at + 1])
            del base[at : at + 2]
    # each child serves its metrics on its own port: the given one plus its device index
    return [([*base, "--name", f"{name}-gpu{i}", *(["--metrics-port", str(port + i)] if port else [])],
             {"CUDA_VISIBLE_DEVICES": str(i), "LECTOR_DEVICE": "cuda"})
            for i in range(gpus)]


def run_children(children: list[tuple[list[str], dict[str, str]]], settings: Settings | None = None) -> int:
    """Run the processes, restarting any that dies, until we are told to stop; then stop them all."""
    return supervise({f"child{i}": child for i, child in enumerate(children)}, **_restart_options(settings or Settings()))


class _RestartOptions(TypedDict):
    max_restarts_per_minute: int
    backoff_s: float


def _restart_options(settings: Settings) -> _RestartOptions:
    return {"max_restarts_per_minute": settings.restart_limit_per_minute, "backoff_s": settings.restart_backoff_s}


def ensure_dev_key(settings: Settings, database_url: str) -> str | None:
    """On a dev setup with no accounts, create account ``dev`` and print its key once."""
    from store.db import accounts, keys
    from store.db.session import make_engine, make_sessionmaker, session_scope

    key_file = settings.data_dir / "dev-api-key"
    engine = make_engine(database_url)
    try:
        with session_scope(make_sessionmaker(engine)) as session:
            if accounts.list_accounts(session=session):
                return key_file.read_text().strip() if key_file.exists() else None
            account = accounts.create_account(session=session, name="dev")
            _, plaintext = keys.create_key(session=session, account_id=account.id, name="make run")
        key_file.write_text(plaintext + "\n")
        key_file.chmod(0o600)
        return plaintext
    finally:
        engine.dispose()


def resume_jobs(database_url: str, broker_url: str, visibility_timeout_s: int) -> int:
    """Re-send the next step of every unfinished job at once: a worker that died took its task
    with it, and waiting for the reaper (``stall_after_s``, minutes) would stall those jobs. A
    job that was not stalled gets a twin task; every step is idempotent, and a chunk is billed
    once (``mark_chunk_done`` refuses a chunk already done)."""
    from datetime import timedelta

    from scheduler import reaper
    from scheduler.queue import Dispatcher, make_celery
    from store.db.session import make_engine, make_sessionmaker, session_scope

    engine = make_engine(database_url)
    try:
        with session_scope(make_sessionmaker(engine)) as session:
            actions = reaper.stalled(session=session, stall_after=timedelta(0))
    finally:
        engine.dispose()
    dispatcher = Dispatcher(make_celery(broker_url, visibility_timeout_s=visibility_timeout_s))
    for task, job_id in actions:
        dispatcher.send(task, job_id)
    if actions:
        log.info("resumed %d unfinished job(s) after a worker restart", len(actions))
    return len(actions)


def run(settings: Settings) -> int:
    from store.db.migrate import upgrade

    # SIGTERM (systemd, docker stop, a CI timeout), SIGHUP and Ctrl-C all stop everything; a
    # second one while stopping changes nothing (lector.children).
    supervisor = Supervisor({}, **_restart_options(settings))
    supervisor.install_signal_handlers()
    backends: Backends | None = None
    try:
        backends = resolve(
            database_url=settings.database_url, redis_url=settings.redis_url, data_dir=settings.data_dir
        )
        try:
            upgrade(backends.database_url)
            key = ensure_dev_key(settings, backends.database_url) if settings.env == "dev" else None
        except OperationalError as exc:  # the one thing an operator fixes here: say it in one line
            reason = str(exc.orig or exc).strip().splitlines()[0]
            print(f"lector: cannot use the database {_safe_url(backends.database_url)}: {reason}"  # noqa: T201
                  " (LECTOR_DATABASE_URL; unset, lector starts an embedded PostgreSQL)", file=sys.stderr, flush=True)
            return 1
        if key:
            print(f"dev API key: {key}  (also in {settings.data_dir / 'dev-api-key'})", flush=True)  # noqa: T201
        env = child_env(settings, backends)
        runfile.write(settings.data_dir, runfile.RunRecord(
            pid=os.getpid(), api_url=f"http://{_client_host(settings.host)}:{settings.port}",
            database_url=backends.database_url, redis_url=backends.redis_url,
        ))
        print(f"  {'postgresql':<14} {_safe_url(backends.database_url)}", flush=True)  # noqa: T201
        print(f"  {'redis':<14} {_safe_url(backends.redis_url)}", flush=True)  # noqa: T201
        for name, (argv, overrides) in commands(settings, gpu_count(settings)).items():
            supervisor.add(name, argv, {**env, **overrides})
            print(f"  {name:<14} {_where(settings, argv)}", flush=True)  # noqa: T201
        urls = (backends.database_url, settings.broker_url or backends.redis_url, settings.visibility_timeout_s)

        def on_restart(name: str) -> None:
            if name.startswith("worker-") and name != "worker-live":  # the live worker holds no job's step
                resume_jobs(*urls)

        supervisor.on_restart = on_restart
        supervisor.start()
        print(  # noqa: T201
            f"lector is starting on http://{_client_host(settings.host)}:{settings.port} (Ctrl-C stops it)", flush=True
        )
        return supervisor.watch()
    except KeyboardInterrupt:
        return 0
    finally:
        runfile.remove(settings.data_dir)
        supervisor.stop()
        if backends is not None:
            backends.close()


def _where(settings: Settings, argv: list[str]) -> str:
    """Where a child listens or what it takes, for its one line in ``make run``'s output."""
    if "serve" in argv:
        return f"http://{_client_host(settings.host)}:{settings.port}  (metrics /metrics, health /readyz)"
    queues = argv[argv.index("--queues") + 1] if "--queues" in argv else "?"
    return f"Celery queue {queues}" + (" + the periodic reaper" if "--beat" in argv else "")


def _safe_url(url: str) -> str:
    """A URL without its password, fit to print."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not a SQLAlchemy URL (redis://): print it without userinfo
        scheme, _, rest = url.partition("://")
        return f"{scheme}://{rest.rpartition('@')[2]}"


def _client_host(host: str) -> str:
    """Where a client on this machine reaches a server bound to ``host``."""
    return "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
