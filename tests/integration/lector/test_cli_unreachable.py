"""An unreachable database is one line from the admin commands, not a traceback."""

from __future__ import annotations

import os
import socket
import subprocess

from tests.fixtures.stack import BIN, ROOT


def test_unreachable_database_is_one_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as closed:  # bound, never listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("LECTOR_")}
        env.update({"LECTOR_DATABASE_URL": f"postgresql+psycopg://postgres@127.0.0.1:{port}/nothing",
                    "LECTOR_DATA_DIR": str(tmp_path)})
        for args in (["accounts", "list"], ["admin", "usage"]):
            result = subprocess.run([str(BIN / "lector"), *args], env=env, capture_output=True, text=True,
                                    timeout=60, cwd=ROOT)
            assert result.returncode == 1
            lines = [line for line in result.stderr.splitlines() if line.strip()]
            assert len(lines) == 1, result.stderr
            assert lines[0].startswith("DatabaseUnavailable:") and "Connection refused" in lines[0]
