"""Model service benchmark: dynamic batching on against off, at 1, 4, 16 and 64 concurrent requests.

    python -m bench.model_server [--quick] [--device auto|cpu|cuda] [--levels 1,4,16,64]

Two model services run the *same loaded voice* over real loopback HTTP in this process: one
batching (``--window-ms``, ``--max-batch``), one not (window 0, batch 1). At each concurrency
level, that many client threads send one-sentence requests through ``RemoteEngine`` (what the
facade uses) until the level's request count is done. Latency is per request, client side
(queueing, the window, inference, transfer); throughput is requests and audio seconds per wall
second. The last line is ``RESULT speedup_at_<n>=<on/off throughput> ... p95_ms_at_1=<on>/<off>``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np
import uvicorn

from bench.engine import SENTENCES
from facade.model_service import create_model_app
from facade.remote_engine import RemoteEngine


@dataclass(frozen=True, slots=True)
class Level:
    mode: str
    concurrency: int
    requests: int
    wall_s: float
    audio_s: float
    p50_ms: float
    p95_ms: float
    batches: int
    items: int

    @property
    def rps(self) -> float:
        return self.requests / self.wall_s

    @property
    def audio_per_s(self) -> float:
        return self.audio_s / self.wall_s


class _Service:
    """A model service on a free loopback port, in a thread."""

    def __init__(self, engine: Any, *, window_ms: float, max_batch: int) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        app = create_model_app(lambda: engine, window_ms=window_ms, max_batch=max_batch, voice="bench")
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> _Service:
        self.thread.start()
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/readyz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError("model service did not become ready")

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)

    def stats(self) -> dict[str, Any]:
        return httpx.get(self.url + "/stats").json()  # type: ignore[no-any-return]


def run_level(service: _Service, mode: str, concurrency: int, requests: int) -> Level:
    engine = RemoteEngine(service.url + "/invocations", voice="bench", encoding="s16")
    before = service.stats()
    latencies: list[float] = []
    audio = [0.0]
    lock = threading.Lock()
    counter = iter(range(requests))

    def client() -> None:
        while True:
            with lock:
                index = next(counter, None)
            if index is None:
                return
            start = time.perf_counter()
            chunk = engine.synthesize([SENTENCES[index % len(SENTENCES)]])[0]
            elapsed = time.perf_counter() - start
            with lock:
                latencies.append(elapsed)
                audio[0] += chunk.duration

    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        for future in [pool.submit(client) for _ in range(concurrency)]:
            future.result()
    wall = time.perf_counter() - start
    after = service.stats()
    engine.close()
    ms = np.array(latencies) * 1000
    return Level(mode, concurrency, requests, wall, audio[0], float(np.percentile(ms, 50)), float(np.percentile(ms, 95)),
                 after["batches"] - before["batches"], after["items"] - before["items"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests per level")
    parser.add_argument("--levels", default="1,4,16,64")
    parser.add_argument("--window-ms", type=float, default=5.0)
    parser.add_argument("--max-batch", type=int, default=16)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: every core)")
    args = parser.parse_args()

    import torch

    from speech.engines.vits import VitsEngine

    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    engine = VitsEngine.load_default(device=device, threads=args.threads)
    levels = [int(n) for n in args.levels.split(",")]
    from bench.machine import describe

    print(describe(device, "float32"))
    print(f"voice joe on {device} ({os.cpu_count()} cores, torch threads {torch.get_num_threads()}); "
          f"batching: window {args.window_ms} ms, max batch {args.max_batch}")
    print(f"{'mode':<4} {'conc':>4} {'reqs':>5} {'req/s':>7} {'audio s/s':>9} {'p50 ms':>8} {'p95 ms':>8} "
          f"{'batches':>7} {'mean batch':>10}")
    results: dict[tuple[str, int], Level] = {}
    services = {
        "on": _Service(engine, window_ms=args.window_ms, max_batch=args.max_batch),
        "off": _Service(engine, window_ms=0.0, max_batch=1),
    }
    with services["on"], services["off"]:
        for service in services.values():  # connections, allocator and caches warm before timing
            run_level(service, "warm-up", 2, 4)
        for concurrency in levels:
            requests = max(concurrency * (1 if args.quick else 2), 8 if args.quick else 16)
            for mode in ("on", "off"):  # same level back to back: the machine's state is comparable
                level = run_level(services[mode], mode, concurrency, requests)
                results[mode, concurrency] = level
                print(f"{mode:<4} {concurrency:>4} {requests:>5} {level.rps:>7.2f} {level.audio_per_s:>9.2f} "
                      f"{level.p50_ms:>8.0f} {level.p95_ms:>8.0f} {level.batches:>7} "
                      f"{level.items / max(level.batches, 1):>10.2f}", flush=True)
    speedups = " ".join(
        f"speedup_at_{n}={results['on', n].rps / results['off', n].rps:.2f}x" for n in levels
    )
    first = levels[0]
    print(f"RESULT {speedups} p95_ms_at_{first}={results['on', first].p95_ms:.0f}/{results['off', first].p95_ms:.0f} "
          f"device={device}")


if __name__ == "__main__":
    main()
