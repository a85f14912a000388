"""The usage spool: durable appends, batches, a cursor that moves only on success, restarts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from facade.usage_spool import UsageSpool


class Endpoint:
    def __init__(self) -> None:
        self.up = False
        self.batches: list[list[dict[str, Any]]] = []

    def post(self, body: dict[str, Any]) -> bool:
        if not self.up:
            return False
        self.batches.append(body["records"])
        return True

    @property
    def records(self) -> list[dict[str, Any]]:
        return [r for batch in self.batches for r in batch]


def test_records_wait_on_disk_while_the_endpoint_is_down(tmp_path: Path) -> None:
    endpoint = Endpoint()
    spool = UsageSpool(tmp_path, "http://usage", post=endpoint.post, batch_size=2)
    for n in (10, 20, 30):
        spool.append({"characters": n})
    assert spool.flush() == 0
    assert [r["characters"] for r in spool.pending()] == [10, 20, 30]
    endpoint.up = True
    assert spool.flush() == 3
    assert [len(b) for b in endpoint.batches] == [2, 1]
    assert [r["characters"] for r in endpoint.records] == [10, 20, 30]
    assert spool.pending() == []
    assert spool.spool_path.stat().st_size == 0  # compacted once everything was acknowledged


def test_nothing_is_lost_or_resent_across_a_restart(tmp_path: Path) -> None:
    endpoint = Endpoint()
    first = UsageSpool(tmp_path, "http://usage", post=endpoint.post, batch_size=2)
    for n in range(5):
        first.append({"characters": n})
    endpoint.up = True
    endpoint_calls = 0

    def one_batch_then_down(body: dict[str, Any]) -> bool:
        nonlocal endpoint_calls
        endpoint_calls += 1
        return endpoint.post(body) if endpoint_calls == 1 else False

    first._post = one_batch_then_down  # the endpoint falls over after the first batch
    assert first.flush() == 2
    first.close()  # "process exit"

    second = UsageSpool(tmp_path, "http://usage", post=endpoint.post, batch_size=10)
    assert [r["characters"] for r in second.pending()] == [2, 3, 4]
    second.append({"characters": 5})
    assert second.flush() == 4
    assert [r["characters"] for r in endpoint.records] == [0, 1, 2, 3, 4, 5]
    assert len({r["id"] for r in endpoint.records}) == 6


def test_a_torn_last_line_and_a_stale_cursor_are_repaired(tmp_path: Path) -> None:
    spool = UsageSpool(tmp_path, None)
    spool.append({"characters": 7})
    with open(spool.spool_path, "ab") as handle:
        handle.write(b'{"characters": 8, "id"')  # a crash mid-append
    (tmp_path / "cursor").write_text("999999")  # a compaction cut short
    again = UsageSpool(tmp_path, None)
    again.append({"characters": 9})
    assert [r["characters"] for r in again.pending()] == [7, 9]


def test_the_background_flusher_sends_over_http(tmp_path: Path) -> None:
    received: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        received.extend(json.loads(request.content)["records"])
        return httpx.Response(204)

    spool = UsageSpool(tmp_path, "http://usage/report", interval_s=0.05, transport=httpx.MockTransport(handler))
    spool.start()
    spool.append({"characters": 42, "model": "mist"})
    spool.close()
    assert [(r["characters"], r["model"]) for r in received] == [(42, "mist")]
    assert {"id", "ts"} <= set(received[0])
