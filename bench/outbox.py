"""The usage outbox's store: lector's own spool (``facade.usage_spool``) against SQLite in WAL mode.

    python -m bench.outbox [--records 1000] [--threads 1,4] [--repeats 3] [--kills 5]

Both keep a billed record on disk before ``append`` returns and hand records on in batches
once acknowledged. The candidate is the smallest SQLite outbox that does the same
(``SqliteOutbox`` below: one table, ``journal_mode=WAL``, ``synchronous=FULL`` so every commit
is fsynced as every spool line is; ``synchronous=NORMAL`` is timed too, for what it would buy: it
survives a killed process but not a power cut, which the spool does). Measured in the same run,
on the same disk, each in a fresh directory, the medians of interleaved repeats:

- ``append``: records per second, one fsynced record per call, from 1 and from 4 threads (the
  API appends from its blocking pool);
- ``drain``: delivering every record in batches of 500 (acknowledged at once) and compacting;
- ``size``: bytes on disk per pending record (spool: ``usage.jsonl`` + ``cursor``; SQLite:
  database + WAL + shared memory);
- ``kill -9``: a child process appends as fast as it can and reports each record once ``append``
  returned; it is killed at a random moment, the store is opened again, and every reported
  record must be pending (``lost`` must be 0); ``reopen_ms`` is the open-and-recover time.

Figures are printed as ratios against the spool (``x spool``), beside the machine line; the
machine is shared, so absolute rates move with its load, the ratios much less.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from bench.machine import describe
from facade.usage_spool import UsageSpool

RECORD: dict[str, Any] = {
    "characters": 142, "model": "mistv3", "speaker": "joe", "lang": "en", "transport": "http",
    "audioSeconds": 9.41, "requestId": "0f3c2a9e7b5d4c1a", "customer": "ACME Corp", "licenseId": "lic_42",
}


class Outbox(Protocol):
    def append(self, record: Mapping[str, Any]) -> dict[str, Any]: ...

    def pending(self) -> list[dict[str, Any]]: ...

    def flush(self) -> int: ...

    def close(self) -> None: ...


class SqliteOutbox:
    """The candidate: the spool's contract on SQLite. ``post`` as ``UsageSpool``'s."""

    def __init__(self, directory: Path, *, post: Callable[[dict[str, Any]], bool] | None = None,
                 synchronous: str = "FULL", batch_size: int = 500) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / "outbox.sqlite3"
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={synchronous}")
        self._db.execute("CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY, record TEXT NOT NULL)")
        self._lock = threading.Lock()
        self._post = post
        self.batch_size = batch_size

    def append(self, record: Mapping[str, Any]) -> dict[str, Any]:
        full = {"id": uuid.uuid4().hex, "ts": datetime.now(UTC).isoformat().replace("+00:00", "Z"), **record}
        line = json.dumps(full, separators=(",", ":"), sort_keys=True)
        with self._lock:
            self._db.execute("INSERT INTO outbox (record) VALUES (?)", (line,))  # autocommit: one fsync
        return full

    def pending(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute("SELECT record FROM outbox ORDER BY seq").fetchall()
        return [json.loads(row[0]) for row in rows]

    def flush(self) -> int:
        sent = 0
        while self._post is not None:
            with self._lock:
                rows = self._db.execute("SELECT seq, record FROM outbox ORDER BY seq LIMIT ?", (self.batch_size,)).fetchall()
            if not rows or not self._post({"records": [json.loads(r[1]) for r in rows]}):
                break
            with self._lock:
                self._db.execute("DELETE FROM outbox WHERE seq <= ?", (rows[-1][0],))
            sent += len(rows)
        with self._lock:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return sent

    def close(self) -> None:
        self._db.close()


def _accept(body: dict[str, Any]) -> bool:
    return True


def build(kind: str, directory: Path, *, post: Callable[[dict[str, Any]], bool] | None = None) -> Outbox:
    if kind == "spool":
        return UsageSpool(directory, None, post=post)
    return SqliteOutbox(directory, post=post, synchronous="NORMAL" if kind == "sqlite-normal" else "FULL")


def _disk_bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.iterdir() if p.is_file())


def measure(kind: str, root: Path, records: int, threads: int) -> dict[str, float]:
    """Append ``records`` from ``threads`` threads, then size, reopen and drain."""
    directory = root / f"{kind}-{threads}"
    outbox = build(kind, directory)
    start = time.perf_counter()
    if threads == 1:
        for _ in range(records):
            outbox.append(RECORD)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda _: outbox.append(RECORD), range(records)))
    append_s = time.perf_counter() - start
    outbox.close()
    size = _disk_bytes(directory)
    start = time.perf_counter()
    reopened = build(kind, directory, post=_accept)
    reopen_s = time.perf_counter() - start
    assert len(reopened.pending()) == records, f"{kind}: {len(reopened.pending())} pending of {records}"
    start = time.perf_counter()
    sent = reopened.flush()
    drain_s = time.perf_counter() - start
    assert sent == records and reopened.pending() == [], f"{kind}: drained {sent} of {records}"
    reopened.close()
    return {"append_per_s": records / append_s, "bytes_per_record": size / records,
            "reopen_ms": reopen_s * 1000, "drain_per_s": records / drain_s}


def kill_once(kind: str, directory: Path, rng: random.Random) -> tuple[int, int, float]:
    """(records the child reported appended, records pending after its kill -9, reopen ms)."""
    child = subprocess.Popen(  # noqa: S603 - ourselves
        [sys.executable, "-m", "bench.outbox", "--child", kind, str(directory)],
        stdout=subprocess.PIPE, text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    time.sleep(rng.uniform(0.2, 0.6))
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    reported = [line for line in child.stdout.read().splitlines() if line.strip()]
    acknowledged = int(reported[-1]) if reported else 0
    start = time.perf_counter()
    outbox = build(kind, directory)
    pending = len(outbox.pending())
    reopen_ms = (time.perf_counter() - start) * 1000
    outbox.close()
    return acknowledged, pending, reopen_ms


def child(kind: str, directory: Path) -> None:
    """Append until killed; print the count after each append has returned (it is durable)."""
    outbox = build(kind, directory)
    print("ready", flush=True)  # noqa: T201 - the parent reads it
    count = 0
    while True:
        outbox.append(RECORD)
        count += 1
        print(count, flush=True)  # noqa: T201 - the parent reads it


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--threads", default="1,4")
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("KIND", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return
    print(describe("cpu", "n/a"))  # noqa: T201 - the bench's output
    kinds = ("spool", "sqlite", "sqlite-normal")
    with tempfile.TemporaryDirectory(prefix="lector-bench-outbox-", dir=os.environ.get("TMPDIR")) as tmp:
        root = Path(tmp)
        print(f"disk: {root} (records={args.records})")  # noqa: T201
        results: dict[tuple[str, int], dict[str, float]] = {}
        for threads in (int(t) for t in args.threads.split(",")):
            # Interleaved repeats, medians: the disk's fsync time drifts with the machine's load.
            runs: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
            for repeat in range(args.repeats):
                for kind in kinds:
                    runs[kind].append(measure(kind, root / f"r{repeat}", args.records, threads))
            for kind in kinds:
                results[(kind, threads)] = {key: statistics.median(run[key] for run in runs[kind]) for key in runs[kind][0]}
            spool = results[("spool", threads)]
            for kind in kinds:
                row = results[(kind, threads)]
                print(  # noqa: T201
                    f"{kind:14s} threads={threads}  append {row['append_per_s']:8.0f}/s "
                    f"({row['append_per_s'] / spool['append_per_s']:.2f}x spool)  "
                    f"drain {row['drain_per_s']:9.0f}/s ({row['drain_per_s'] / spool['drain_per_s']:.2f}x)  "
                    f"size {row['bytes_per_record']:6.0f} B/record ({row['bytes_per_record'] / spool['bytes_per_record']:.2f}x)  "
                    f"reopen {row['reopen_ms']:6.1f} ms"
                )
        rng = random.Random(25)
        for kind in kinds:
            outcomes = [kill_once(kind, root / f"kill-{kind}-{n}", rng) for n in range(args.kills)]
            lost = sum(max(0, acknowledged - pending) for acknowledged, pending, _ in outcomes)
            print(  # noqa: T201
                f"{kind:14s} kill -9 x{args.kills}: reported {[a for a, _, _ in outcomes]} "
                f"pending after {[p for _, p, _ in outcomes]} lost={lost} "
                f"reopen median {statistics.median(ms for _, _, ms in outcomes):.1f} ms"
            )
        one = results[("sqlite", 1)]["append_per_s"] / results[("spool", 1)]["append_per_s"]
        print(f"RESULT sqlite_full_append_x_spool={one:.2f}")  # noqa: T201


if __name__ == "__main__":
    main()
