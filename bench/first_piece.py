"""The engine's share of the first byte: how long a stream's first sentence takes to synthesize,
alone and with N streams at once, in process (no HTTP, no database), on any device.

    python -m bench.first_piece [--device cuda] [--dtype auto] [--streams 1,16] [--repeats 5]

Where ``bench.first_byte`` needs the whole service (PostgreSQL, Redis, a server), this needs only
the voice, so it runs on a lent GPU host. N streams are N threads, each asking for the same
first sentence through ``speech.batched_engine.BatchedEngine`` (the service's in-process batcher
on GPUs: concurrent calls share a forward pass); a round's time is its slowest stream. The first
sentence is the 117-character opening of Pride and Prejudice, as ``bench.first_byte`` sends.
The last line: ``RESULT`` with the p50 in ms at each stream count.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from bench.machine import describe

FIRST = "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife."


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--speaker", default="ivy")
    parser.add_argument("--model", default="coda")
    parser.add_argument("--streams", type=lambda v: [int(n) for n in v.split(",")], default=[1, 16])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    from speech.batched_engine import BatchedEngine
    from speech.engines.kokoro.engine import resolve_dtype
    from speech.engines.registry import load_engine
    from speech.voices.catalog import Catalog

    dtype = resolve_dtype(args.dtype, args.device)
    voice = Catalog.load().voice(args.model, args.speaker)
    engine = BatchedEngine(load_engine(voice, device=args.device, dtype=dtype), max_batch=max(args.streams))
    print(describe(args.device, dtype))  # noqa: T201
    try:
        for _ in range(3):  # warm-up: kernels, compiled chains, the batcher's thread
            engine.synthesize([FIRST])
        results = {}
        with ThreadPoolExecutor(max(args.streams)) as pool:
            for streams in args.streams:
                rounds = []
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    list(pool.map(lambda _: engine.synthesize([FIRST]), range(streams)))
                    rounds.append((time.perf_counter() - start) * 1000)
                results[streams] = statistics.median(rounds)
                print(f"{streams} streams: rounds {', '.join(f'{r:.0f}' for r in rounds)} ms")  # noqa: T201
    finally:
        engine.close()
    print("RESULT " + " ".join(f"first_piece_{n}_ms={ms:.0f}" for n, ms in results.items()))  # noqa: T201


if __name__ == "__main__":
    main()
