"""``lector run``: the whole service in the foreground on one machine.

Resolves (or starts) PostgreSQL and Redis, applies migrations, makes sure a dev account and key
exist so a newcomer can curl it at once, then runs the API, a GPU-queue worker, a CPU-queue worker
with the periodic reaper, each in its own process group. Ctrl-C stops everything it started.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from lector import runfile
from lector.services import Backends, resolve
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
    and one process per device keeps every device busy); one on the CPU when there is none."""
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


def run_children(children: list[tuple[list[str], dict[str, str]]]) -> int:
    """Run the processes until one exits or we are told to stop; then stop them all."""
    signal.signal(signal.SIGTERM, _interrupt)
    procs = {
        f"child{i}": subprocess.Popen(argv, env={**os.environ, **env}, start_new_session=True)
        for i, (argv, env) in enumerate(children)
    }
    try:
        return _watch(procs)
    except KeyboardInterrupt:
        return 0
    finally:
        _stop_all(procs)


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


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run(settings: Settings) -> int:
    from store.db.migrate import upgrade

    # SIGTERM (systemd, docker stop, a CI timeout) stops everything just as Ctrl-C does.
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGHUP, _interrupt)

    backends = resolve(
        database_url=settings.database_url, redis_url=settings.redis_url, data_dir=settings.data_dir
    )
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        upgrade(backends.database_url)
        if settings.env == "dev":
            key = ensure_dev_key(settings, backends.database_url)
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
            procs[name] = subprocess.Popen(argv, env={**env, **overrides}, start_new_session=True)
            print(f"  {name:<14} {_where(settings, argv)}  (pid {procs[name].pid})", flush=True)  # noqa: T201
        print(  # noqa: T201
            f"lector is starting on http://{_client_host(settings.host)}:{settings.port} (Ctrl-C stops it)", flush=True
        )
        return _watch(procs)
    except KeyboardInterrupt:
        return 0
    finally:
        runfile.remove(settings.data_dir)
        _stop_all(procs)
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


def _watch(procs: dict[str, subprocess.Popen[bytes]]) -> int:
    """Block until one process exits (the caller then stops the rest): its code, never 0."""
    while True:
        for name, proc in procs.items():
            if proc.poll() is not None:
                log.error("%s exited with %s; stopping", name, proc.returncode)
                return proc.returncode or 1
        time.sleep(0.5)


def _stop_all(procs: dict[str, subprocess.Popen[bytes]]) -> None:
    for proc in procs.values():
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 15
    for proc in procs.values():
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
