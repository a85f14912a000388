"""How a suite's wall time fell on its workers (``LECTOR_TEST_TIMELINE``, ``tests/conftest.py``):
per worker, when it finished its last test, and the files that took longest on it.

    LECTOR_TEST_TIMELINE=/tmp/tl bash infra/test.sh; python -m tests.support.timeline /tmp/tl
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path


def main(folder: Path) -> None:
    lines = {log.stem: [line.split(" ", 1) for line in log.read_text().splitlines() if " " in line]
             for log in sorted(folder.glob("*.log"))}
    start = min(float(entries[0][0]) for entries in lines.values() if entries)
    for worker, entries in lines.items():
        files: dict[str, float] = defaultdict(float)
        last = start
        for stamp, nodeid in entries:
            files[nodeid.split("::")[0]] += float(stamp) - last
            last = float(stamp)
        print(f"{worker}: {len(entries)} tests, last ended at {(last - start) / 60:.1f} min")  # noqa: T201
        for name, seconds in sorted(files.items(), key=lambda kv: -kv[1])[:12]:
            print(f"  {seconds:7.1f} s  {name}")  # noqa: T201


if __name__ == "__main__":
    main(Path(sys.argv[1]))
