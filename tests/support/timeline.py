"""How a suite's wall time fell on its workers (``LECTOR_TEST_TIMELINE``, ``tests/conftest.py``):
per worker, when it finished its last test and the CPU it used, and the files that took longest
on it, each with its CPU seconds (the worker's, its reaped children's and its live descendants':
a file's stacks and the servers it asked); then the files that used the most CPU on any worker,
which is what bounds a run on two cores.

    LECTOR_TEST_TIMELINE=/tmp/tl bash infra/test.sh; python -m tests.support.timeline /tmp/tl
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path


def entry(line: str) -> tuple[float, float, str]:
    """``(ended, cpu so far, node id)`` of a log line: ``<ended> <cpu> <node id>``."""
    stamp, cpu, nodeid = line.split(" ", 2)
    return float(stamp), float(cpu), nodeid


def main(folder: Path) -> None:
    lines = {log.stem: [entry(line) for line in log.read_text().splitlines() if line.strip()]
             for log in sorted(folder.glob("*.log"))}
    start = min(entries[0][0] for entries in lines.values() if entries)
    suite: dict[str, float] = defaultdict(float)
    for worker, entries in lines.items():
        files: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        last, used = start, 0.0
        for stamp, cpu, nodeid in entries:
            spent = files[nodeid.split("::")[0]]
            spent[0] += stamp - last
            spent[1] += cpu - used
            last, used = stamp, cpu
        print(f"{worker}: {len(entries)} tests, last ended at {(last - start) / 60:.1f} min, {used / 60:.1f} CPU min")  # noqa: T201
        for name, (seconds, cpu) in sorted(files.items(), key=lambda kv: -kv[1][0])[:12]:
            print(f"  {seconds:7.1f} s  {cpu:7.1f} CPU s  {name}")  # noqa: T201
        for name, (_, cpu) in files.items():
            suite[name] += cpu
    print(f"all: {sum(suite.values()) / 60:.1f} CPU min; the most:")  # noqa: T201
    for name, cpu in sorted(suite.items(), key=lambda kv: -kv[1])[:20]:
        print(f"  {cpu:7.1f} CPU s  {name}")  # noqa: T201


if __name__ == "__main__":
    main(Path(sys.argv[1]))
