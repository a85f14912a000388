"""Self-hosted usage reporting: character counts spooled on disk, sent to ``LECTOR_USAGE_URL`` in batches.

Billing is per character, so a count must survive a crash, a restart and an unreachable endpoint.
Every synthesis appends one JSON line to ``<dir>/usage.jsonl`` and fsyncs it before the call
returns. ``<dir>/cursor`` holds the byte offset of the first line not yet acknowledged; it is
replaced atomically (write, fsync, rename) only after the endpoint answered 2xx for a batch. So
the spool is append-only between compactions and the cursor only moves forward.

Delivery is at least once: a crash between the endpoint's answer and the cursor write resends
that batch. Each record carries a random ``id`` so the receiver can drop duplicates.

The batch body is ``{"records": [{"id", "ts", "characters", "model", "speaker", "lang",
"transport", "audioSeconds", "requestId", "customer", "licenseId"}...]}`` (the last two are added
by the self-hosted runtime from the licence the synthesis ran under). When everything is acknowledged, the spool is truncated
(under the same lock as appends) so it never grows without bound.

Nothing is dropped silently: a spool line that is not JSON (a disk error, a hand edit) is logged
and copied to ``<dir>/corrupt.jsonl`` before the cursor passes it, and a record the receiver
refuses for good (``DeadLetters``, used by the cloud outbox's replay) goes to
``<dir>/dead-letter.jsonl`` with the reason, so the records behind it are not held up.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

log = logging.getLogger("lector.usage_spool")

SPOOL_NAME = "usage.jsonl"
CURSOR_NAME = "cursor"
CORRUPT_NAME = "corrupt.jsonl"
DEAD_LETTER_NAME = "dead-letter.jsonl"


def _append_line(path: Path, line: bytes) -> None:
    """Append one line and fsync it: set-aside records are billing evidence too."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line if line.endswith(b"\n") else line + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)


class DeadLetters:
    """Records that can never be delivered as they are (the receiver refused them for a reason
    other than being away): kept one JSON line each, with the reason, for an operator to mend
    and replay, while delivery goes on with the records behind them."""

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory) / DEAD_LETTER_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def add(self, record: Mapping[str, Any], reason: str) -> None:
        log.error("usage record %s set aside in %s: %s", record.get("requestId") or record.get("id"), self.path, reason)
        line = json.dumps({"reason": reason, "record": dict(record)}, separators=(",", ":"), default=str).encode()
        with self._lock:
            _append_line(self.path, line)

    def records(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_bytes().splitlines() if line.strip()]


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class UsageSpool:
    """Append usage records durably; a background thread sends them in batches.

    ``url`` None keeps the records on disk only (nothing to report to). ``post`` replaces the HTTP
    call in unit tests; it takes the batch body and returns True when the batch was accepted.
    """

    def __init__(
        self,
        directory: str | Path,
        url: str | None,
        *,
        batch_size: int = 500,
        interval_s: float = 10.0,
        timeout_s: float = 5.0,
        post: Callable[[dict[str, Any]], bool] | None = None,
        transport: httpx.BaseTransport | None = None,
        dead_letters: DeadLetters | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.dead_letters = dead_letters or DeadLetters(self.directory)
        self.spool_path = self.directory / SPOOL_NAME
        self.cursor_path = self.directory / CURSOR_NAME
        self.url = url
        self.batch_size = batch_size
        self.interval = interval_s
        self._post = post
        self._http = httpx.Client(timeout=timeout_s, transport=transport) if url and post is None else None
        self._lock = threading.Lock()  # appends, cursor moves and compaction
        self._send_lock = threading.Lock()  # one flush at a time
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.sent = 0  # records acknowledged by this process (for tests and logs)
        self._recover()

    # --- writing ---------------------------------------------------------------------------------

    def append(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """Persist one record (fsynced) and return it with its ``id`` and ``ts``."""
        full = {"id": uuid.uuid4().hex, "ts": datetime.now(UTC).isoformat().replace("+00:00", "Z"), **record}
        line = (json.dumps(full, separators=(",", ":"), sort_keys=True) + "\n").encode()
        with self._lock:
            fd = os.open(self.spool_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
        if self.pending_bytes() >= self.batch_size * 200:  # roughly a batch's worth: send soon
            self._wake.set()
        return full

    # --- state -----------------------------------------------------------------------------------

    def _read_cursor(self) -> int:
        try:
            return int(self.cursor_path.read_text().strip() or 0)
        except (OSError, ValueError):
            return 0

    def _write_cursor(self, offset: int) -> None:
        tmp = self.cursor_path.with_suffix(".tmp")
        with open(tmp, "w", encoding="ascii") as handle:
            handle.write(str(offset))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.cursor_path)
        _fsync_dir(self.directory)

    def _size(self) -> int:
        try:
            return self.spool_path.stat().st_size
        except FileNotFoundError:
            return 0

    def _recover(self) -> None:
        """A cursor past the end means a compaction was cut short: start from 0. A torn last
        line (a crash mid-write, before its fsync returned) was never acknowledged to a caller:
        it is cut off so the next append starts on a fresh line."""
        with self._lock:
            size = self._size()
            if self._read_cursor() > size:
                self._write_cursor(0)
            if size:
                with open(self.spool_path, "rb+") as handle:
                    handle.seek(max(0, size - 1))
                    if handle.read(1) != b"\n":
                        data = self.spool_path.read_bytes()
                        keep = data.rfind(b"\n") + 1
                        handle.truncate(keep)
                        os.fsync(handle.fileno())

    def pending_bytes(self) -> int:
        return max(0, self._size() - self._read_cursor())

    def pending(self) -> list[dict[str, Any]]:
        """Records not yet acknowledged, oldest first."""
        records, _ = self._read_batch(limit=None)
        return records

    def _read_batch(self, *, limit: int | None, set_aside: bool = False) -> tuple[list[dict[str, Any]], int]:
        """(records from the cursor on, up to ``limit``; the offset just past the last one).
        With ``set_aside`` (sending), a line that is not a JSON object is logged and copied to
        ``corrupt.jsonl`` before the cursor can pass it."""
        offset = self._read_cursor()
        records: list[dict[str, Any]] = []
        try:
            handle = open(self.spool_path, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return records, offset
        with handle:
            handle.seek(offset)
            for line in handle:
                if not line.endswith(b"\n"):
                    break  # an append in progress
                offset += len(line)
                try:
                    record = json.loads(line)
                    if not isinstance(record, dict):
                        raise ValueError("not a JSON object")
                except ValueError as exc:
                    if set_aside:
                        log.error("corrupt usage spool line at byte %d set aside in %s: %s",
                                  offset - len(line), self.directory / CORRUPT_NAME, exc)
                        _append_line(self.directory / CORRUPT_NAME, line)
                    continue
                records.append(record)
                if limit is not None and len(records) >= limit:
                    break
        return records, offset

    # --- sending ---------------------------------------------------------------------------------

    def _send(self, body: dict[str, Any]) -> bool:
        if self._post is not None:
            return self._post(body)
        if self._http is None or self.url is None:
            return False
        try:
            response = self._http.post(self.url, json=body)
        except httpx.HTTPError as exc:
            log.warning("usage endpoint unreachable: %s", exc)
            return False
        if 200 <= response.status_code < 300:
            return True
        log.warning("usage endpoint answered %s", response.status_code)
        return False

    def flush(self) -> int:
        """Send every pending batch until one fails; returns the records acknowledged."""
        if self.url is None and self._post is None:
            return 0
        sent = 0
        with self._send_lock:
            while True:
                records, end = self._read_batch(limit=self.batch_size, set_aside=True)
                if not records:
                    if end != self._read_cursor():  # only unreadable lines were left
                        with self._lock:
                            self._write_cursor(end)
                    break
                if not self._send({"records": records}):
                    break
                with self._lock:
                    self._write_cursor(end)
                sent += len(records)
                self.sent += len(records)
            self._compact()
        return sent

    def _compact(self) -> None:
        with self._lock:
            size = self._size()
            if size and self._read_cursor() == size:
                with open(self.spool_path, "rb+") as handle:
                    handle.truncate(0)
                    os.fsync(handle.fileno())
                self._write_cursor(0)

    # --- background ------------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is None and (self.url is not None or self._post is not None):
            self._thread = threading.Thread(target=self._loop, name="usage-flusher", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.interval)
            self._wake.clear()
            try:
                self.flush()
            except Exception:  # noqa: BLE001 - the flusher must outlive one bad flush
                log.exception("usage flush failed")

    def close(self) -> None:
        """Stop the flusher after one last attempt; what is not sent stays spooled."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        with contextlib.suppress(Exception):
            self.flush()
        if self._http is not None:
            self._http.close()
