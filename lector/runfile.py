"""What ``make run`` (``lector run``) started, recorded under the data folder for the CLI.

``lector run`` may pick an embedded PostgreSQL or Redis (no local server answered), or a port
from ``LECTOR_PORT``; the other ``lector`` commands must then find those, not the defaults. The
supervisor writes ``<data_dir>/run.json`` once its backends are up and removes it on exit; the
CLI uses it when nothing is configured explicitly and the supervisor that wrote it still runs.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

FILE_NAME = "run.json"


@dataclass(frozen=True, slots=True)
class RunRecord:
    pid: int
    api_url: str
    database_url: str
    redis_url: str


def path(data_dir: Path) -> Path:
    return data_dir / FILE_NAME


def write(data_dir: Path, record: RunRecord) -> None:
    target = path(data_dir)
    partial = target.with_suffix(".tmp")
    partial.write_text(json.dumps(asdict(record), indent=2) + "\n")
    partial.chmod(0o600)  # the database URL may hold a password
    os.replace(partial, target)


def remove(data_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path(data_dir).unlink()


def read(data_dir: Path) -> RunRecord | None:
    """The record of a running ``lector run``; None if there is none or its process is gone."""
    try:
        raw = json.loads(path(data_dir).read_text())
        record = RunRecord(int(raw["pid"]), str(raw["api_url"]), str(raw["database_url"]), str(raw["redis_url"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record if _alive(record.pid) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
