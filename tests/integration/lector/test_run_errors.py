"""``lector run`` with a database it cannot reach says so in one line and exits 1: an operator
reads what to fix, not a framed traceback of SQLAlchemy's and psycopg's internals."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.servers import free_port

BIN = Path(sys.executable).parent


def test_an_unreachable_database_is_one_line_and_exit_1(tmp_path: Path) -> None:
    closed = free_port()  # nothing listens there
    env = {k: v for k, v in os.environ.items() if not k.startswith("LECTOR_")}
    env.update({"LECTOR_DATA_DIR": str(tmp_path), "LECTOR_PORT": str(free_port()),
                "LECTOR_DATABASE_URL": f"postgresql+psycopg://lector:s3cret@127.0.0.1:{closed}/books"})
    done = subprocess.run([str(BIN / "lector"), "run"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr[-2000:]
    said = [line for line in done.stderr.splitlines() if line.startswith("lector: ")]
    assert len(said) == 1 and f"127.0.0.1:{closed}/books" in said[0] and "Connection refused" in said[0], done.stderr
    assert "s3cret" not in done.stdout + done.stderr  # the password is never printed
    assert "Traceback" not in done.stderr and "╭" not in done.stderr
    assert not (tmp_path / "run.json").exists()  # nothing says a lector is running
