"""Load on loopback: concurrent HTTP streams (a share cancelled after the first bytes) and
concurrent ``/ws3`` sessions (a share dropped abruptly), with the voice list probed throughout.

Runs the real API (``lector serve`` in a subprocess, on a throwaway PostgreSQL database and
Redis database 14). Every stream and every session has an API key of its own, so its usage rows
can be told apart: a completed request must be billed exactly its characters, a cancelled one at
most its characters. Bounded in count (``--streams`` of each kind, once) and in time
(``--deadline`` seconds for the whole load, ``--request-timeout`` per request).

    python -m bench.load [--streams 24] [--cancel-share 0.25] [--speaker joe] [--model mistv3]

Prints time to first byte p50/p95 per kind, errors, 5xx, billing checks and the latency of
``GET /data/voices/all-v2.json`` during the load; the last line is ``RESULT ...``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import math
import multiprocessing
import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import websockets

from bench.machine import describe

ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
TEXTS = [
    "The quick brown fox jumps over the lazy dog near the quiet river bank. Morning light came slowly.",
    "She counted the steps twice before she opened the heavy wooden door. Nobody was there.",
    "At last the train arrived, three hours late and almost empty. The guard waved once.",
]


@dataclass
class Outcome:
    kind: str  # "http" or "ws"
    key_id: str
    characters: int  # what was sent
    cancelled: bool
    ttfb_ms: float | None = None
    status: int | None = None
    error: str | None = None
    completed: bool = False


@dataclass
class Probe:
    latencies_ms: list[float] = field(default_factory=list)
    failures: int = 0
    slow: list[tuple[float, float]] = field(default_factory=list)  # (s into the load, ms), over 50 ms


def _ms(value: float) -> int | str:
    """A RESULT field: whole milliseconds, or ``nan`` when nothing was measured (every request failed)."""
    return "nan" if math.isnan(value) else round(value)


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _http_stream(client: httpx.AsyncClient, base: str, key: str, outcome: Outcome, text: str, timeout: float) -> None:
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            async with client.stream("POST", f"{base}/v1/service-tts", json={"text": text, "speaker": SPEAKER, "modelId": MODEL},
                                     headers={"Authorization": f"Bearer {key}", "Accept": "audio/L16"}) as response:
                outcome.status = response.status_code
                if response.status_code != 200:
                    outcome.error = f"HTTP {response.status_code}: {(await response.aread())[:120]!r}"
                    return
                async for chunk in response.aiter_raw():
                    if chunk and outcome.ttfb_ms is None:
                        outcome.ttfb_ms = (time.perf_counter() - started) * 1000
                        if outcome.cancelled:
                            return  # leaving the block closes the connection after the first bytes
                outcome.completed = True
    except Exception as exc:  # noqa: BLE001 - every failure is counted, none stops the run
        outcome.error = f"{type(exc).__name__}: {exc}"[:160]


async def _ws_session(base: str, key: str, outcome: Outcome, text: str, timeout: float) -> None:
    url = base.replace("http://", "ws://") + f"/ws3?speaker={SPEAKER}&modelId={MODEL}&audioFormat=pcm&segment=never"
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {key}"},
                                          max_size=None) as ws:
                await ws.send(json.dumps({"text": text, "contextId": "c"}))
                await ws.send(json.dumps({"operation": "flush", "contextId": "c"}))
                while True:
                    event = json.loads(await ws.recv())
                    if event["type"] == "chunk" and outcome.ttfb_ms is None:
                        base64.b64decode(event["data"])
                        outcome.ttfb_ms = (time.perf_counter() - started) * 1000
                        if outcome.cancelled:
                            ws.transport.abort()  # abrupt: no close frame, the TCP connection just goes
                            return
                    elif event["type"] == "error":
                        outcome.error = f"error event: {event.get('message')}"
                        return
                    elif event["type"] == "done":
                        outcome.completed = True
                        await ws.send(json.dumps({"operation": "eos"}))
                        return
    except websockets.exceptions.InvalidStatus as exc:
        outcome.status = exc.response.status_code
        outcome.error = f"upgrade refused: {exc.response.status_code}"
    except Exception as exc:  # noqa: BLE001
        outcome.error = f"{type(exc).__name__}: {exc}"[:160]


def _probe(base: str, stop: Any, results: Any) -> None:
    """The voice list, fetched every 100 ms on one keep-alive connection, in a process of its own:
    in the load's process, the 48 clients' own event loop delayed the probe's reads and the figure
    measured the client as much as the API."""
    latencies: list[float] = []
    slow: list[tuple[float, float]] = []  # (seconds into the load, ms) of the probes over 50 ms
    failures = 0
    begun = time.perf_counter()
    with httpx.Client(timeout=10) as client:
        while not stop.is_set():
            started = time.perf_counter()
            try:
                response = client.get(f"{base}/data/voices/all-v2.json")
                if response.status_code == 200:
                    latencies.append((time.perf_counter() - started) * 1000)
                    if latencies[-1] > 50:
                        slow.append((started - begun, latencies[-1]))
                else:
                    failures += 1
            except httpx.HTTPError:
                failures += 1
            stop.wait(0.1)
    results.put((latencies, failures, slow))


async def _load(base: str, keys: list[tuple[str, str]], streams: int, share: float, deadline: float,
                timeout: float) -> tuple[list[Outcome], Probe]:
    cancel_every = round(1 / share) if share > 0 else 0
    outcomes: list[Outcome] = []
    jobs = []
    limits = httpx.Limits(max_connections=streams * 2 + 4, max_keepalive_connections=streams)
    context = multiprocessing.get_context("spawn")
    stop, results = context.Event(), context.Queue()
    prober = context.Process(target=_probe, args=(base, stop, results), daemon=True)
    prober.start()
    async with httpx.AsyncClient(timeout=timeout, limits=limits) as client:
        for i in range(streams * 2):
            kind = "http" if i < streams else "ws"
            key_id, key = keys[i]
            text = TEXTS[i % len(TEXTS)]
            outcome = Outcome(kind, key_id, len(text), cancelled=bool(cancel_every) and i % cancel_every == 0)
            outcomes.append(outcome)
            if kind == "http":
                jobs.append(_http_stream(client, base, key, outcome, text, timeout))
            else:
                jobs.append(_ws_session(base, key, outcome, text, timeout))
        try:
            async with asyncio.timeout(deadline):
                await asyncio.gather(*jobs)
        except TimeoutError:
            pass  # outcomes not completed by now count as errors below
    stop.set()
    latencies, failures, slow = results.get(timeout=30)
    prober.join(timeout=10)
    return outcomes, Probe(latencies, failures, slow)


def _billed(url: str) -> dict[str, int]:
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        rows = conn.execute("SELECT api_key_id::text, sum(characters) FROM usage GROUP BY api_key_id").fetchall()
    return {key_id: int(total) for key_id, total in rows}


def _setup(streams: int) -> tuple[str, list[tuple[str, str]]]:
    db = f"lector_load_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{db}"')
    url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{db}"
    from store.db import accounts, keys
    from store.db.migrate import upgrade
    from store.db.session import make_engine, make_sessionmaker, session_scope

    upgrade(url)
    engine = make_engine(url)
    made = []
    with session_scope(make_sessionmaker(engine)) as session:
        account = accounts.create_account(session=session, name="load", ws_connections_per_minute=100_000)
        for i in range(streams * 2):
            row, plaintext = keys.create_key(session=session, account_id=account.id, name=f"stream-{i}")
            made.append((str(row.id), plaintext))
    engine.dispose()
    return url, made


SPEAKER = "joe"
MODEL = "mistv3"


def _device() -> str:
    """The device the server will pick (``LECTOR_DEVICE``, else a GPU if there is one)."""
    chosen = os.environ.get("LECTOR_DEVICE", "auto")
    if chosen != "auto":
        return chosen
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def main() -> None:
    global SPEAKER, MODEL
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=24, help="concurrent HTTP streams, and as many /ws3 sessions")
    parser.add_argument("--cancel-share", type=float, default=0.25, help="share cancelled after the first bytes")
    parser.add_argument("--deadline", type=float, default=300.0, help="seconds for the whole load")
    parser.add_argument("--request-timeout", type=float, default=240.0)
    parser.add_argument("--speaker", default="joe")
    parser.add_argument("--model", default="mistv3", help="the modelId sent (coda: every Kokoro voice, e.g. --speaker ivy)")
    parser.add_argument("--port", type=int, default=18766)
    args = parser.parse_args()
    SPEAKER, MODEL = args.speaker, args.model

    url, keys = _setup(args.streams)
    db = url.rsplit("/", 1)[1]
    env = {**os.environ, "LECTOR_DATABASE_URL": url, "LECTOR_REDIS_URL": "redis://127.0.0.1:6379/14",
           "LECTOR_DATA_DIR": f"/tmp/{db}", "LECTOR_LOOP_STALL_MS": os.environ.get("LECTOR_LOOP_STALL_MS", "40")}
    log_path = Path(f"/tmp/{db}-api.log")
    server = subprocess.Popen([str(Path(sys.executable).with_name("lector")), "serve", "--port", str(args.port)],
                              env=env, stdout=log_path.open("wb"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{args.port}"
    try:
        for _ in range(240):
            try:
                if httpx.get(f"{base}/data/voices/all-v2.json", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        print(describe(_device(), env.get("LECTOR_ENGINE_DTYPE", "auto")), flush=True)  # load before the run
        started = time.perf_counter()
        outcomes, probe = asyncio.run(
            _load(base, keys, args.streams, args.cancel_share, args.deadline, args.request_timeout)
        )
        wall = time.perf_counter() - started
        time.sleep(3)  # a cancelled stream's billing runs as its handler unwinds
        billed = _billed(url)
    finally:
        server.terminate()
        server.wait(timeout=30)
        with psycopg.connect(ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
    _report(outcomes, probe, billed, wall, log_path)


def _report(outcomes: list[Outcome], probe: Probe, billed: dict[str, int], wall: float, log_path: Path) -> None:
    result: dict[str, Any] = {"wall_s": round(wall, 1)}
    for kind in ("http", "ws"):
        mine = [o for o in outcomes if o.kind == kind]
        ttfb = [o.ttfb_ms for o in mine if o.ttfb_ms is not None]
        errors = [o for o in mine if o.error is not None or (not o.completed and not o.cancelled)]
        fivexx = [o for o in mine if o.status is not None and o.status >= 500]
        exact = [o for o in mine if o.completed and billed.get(o.key_id, 0) == o.characters]
        wrong = [o for o in mine if o.completed and billed.get(o.key_id, 0) != o.characters]
        over = [o for o in mine if o.cancelled and billed.get(o.key_id, 0) > o.characters]
        sent = sum(o.characters for o in mine)
        total = sum(billed.get(o.key_id, 0) for o in mine)
        print(f"{kind:4} n={len(mine)} completed={sum(o.completed for o in mine)} cancelled={sum(o.cancelled for o in mine)} "
              f"ttfb p50={_percentile(ttfb, 0.5):.0f} ms p95={_percentile(ttfb, 0.95):.0f} ms errors={len(errors)} "
              f"5xx={len(fivexx)} billed_exact={len(exact)} billed_wrong={len(wrong)} cancelled_over={len(over)} "
              f"chars_sent={sent} chars_billed={total}")
        for o in errors[:5]:
            print(f"     error: {o.error or 'did not complete in time'}")
        result.update({f"{kind}_ttfb_p50_ms": _ms(_percentile(ttfb, 0.5)), f"{kind}_ttfb_p95_ms": _ms(_percentile(ttfb, 0.95)),
                       f"{kind}_errors": len(errors), f"{kind}_5xx": len(fivexx), f"{kind}_billed_wrong": len(wrong),
                       f"{kind}_cancelled_over": len(over)})
    lat = probe.latencies_ms
    print(f"voices probe: n={len(lat)} p50={_percentile(lat, 0.5):.1f} ms p95={_percentile(lat, 0.95):.1f} ms "
          f"max={max(lat, default=float('nan')):.1f} ms failures={probe.failures} over_50ms={sum(v > 50 for v in lat)}")
    if probe.slow:
        print("     over 50 ms at " + ", ".join(f"{at:.1f} s ({ms:.0f} ms)" for at, ms in probe.slow))
    logged = log_path.read_text(errors="replace")
    tracebacks = logged.count("Traceback")
    print(f"API log: {tracebacks} traceback(s) ({log_path})")
    # The API's loop watch (LECTOR_LOOP_STALL_MS, 40 ms here): where its event loop was when it stalled.
    stalls = logged.split("event loop stalled ")[1:]
    print(f"API event loop stalls over {os.environ.get('LECTOR_LOOP_STALL_MS', '40')} ms: {len(stalls)}")
    for stall in stalls[:3]:
        lines = stall.splitlines()
        print(f"     {lines[0]}")
        print("\n".join([f"       {line}" for line in lines[1:] if line.startswith("  ")][-6:]))
    result.update({"probe_p50_ms": round(_percentile(lat, 0.5), 1), "probe_p95_ms": round(_percentile(lat, 0.95), 1),
                   "probe_max_ms": round(max(lat, default=float("nan")), 1), "tracebacks": tracebacks,
                   "loop_stalls": len(stalls)})
    print("RESULT " + " ".join(f"{k}={v}" for k, v in result.items()))


if __name__ == "__main__":
    main()
