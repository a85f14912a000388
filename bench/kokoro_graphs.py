"""Kokoro on a GPU with and without CUDA graphs, in one process on one loaded model.

    python -m bench.kokoro_graphs [--dtypes bfloat16,float32] [--rounds 5] [--streams 1,16]

Per precision: the 64 sentences of ``bench.engine`` in one ``synthesize`` call (batch 64),
compiled chains alone and then replayed from CUDA graphs (``speech/engines/kokoro/graphs.py``),
rounds alternating, each timed by the wall clock and by the process's CPU time (the launches
graphs remove). Then the first piece (``bench.first_piece``'s sentence) at 1 and N streams
through the service's batcher, both ways. Checks printed beside the clock:

- the decoder on one padded batch, eager against the replay of its graph: the same kernels, so
  the largest difference should be 0;
- each sentence's audio with graphs against without, as waveform SNR (the graphs pad batches to
  a bucket, which moves a bfloat16 item as any other padding does).

A ``RESULT`` line per precision with the batch-64 realtime factors and first-piece p50s.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from bench.engine import SENTENCES
from bench.first_piece import FIRST
from bench.machine import describe


def _snr_db(reference: np.ndarray, other: np.ndarray) -> float:
    n = min(len(reference), len(other))
    noise = (
        float(np.sum((reference[:n] - other[:n]) ** 2))
        + float(np.sum(reference[n:] ** 2))
        + float(np.sum(other[n:] ** 2))
    )
    signal = float(np.sum(reference**2))
    return float("inf") if noise == 0 else 10 * np.log10(signal / noise)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtypes", type=lambda v: v.split(","), default=["bfloat16", "float32"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--streams", type=lambda v: [int(n) for n in v.split(",")], default=[1, 16])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    for dtype in args.dtypes:  # a RESULT line each, so a run cut short keeps the first
        print("RESULT " + _one_precision(dtype, args), flush=True)  # noqa: T201


def _one_precision(dtype: str, args: argparse.Namespace) -> str:
    """Batch 64, the decoder check and the first piece at one precision; the RESULT fields."""
    import torch

    from speech.batched_engine import BatchedEngine
    from speech.engines.kokoro import KokoroEngine
    from speech.engines.kokoro.graphs import GraphedDecoder, batch_bucket, frame_bucket, load, padded_inputs
    from speech.engines.registry import kokoro_pack
    from speech.voices.catalog import Catalog

    voice = Catalog.load().voice("coda", "ivy")
    engine = KokoroEngine.load(
        kokoro_pack(voice),
        lang=voice.lang,
        espeak_voice=voice.espeak_voice,
        device="cuda",
        dtype=dtype,
        compile_kernels=True,
        cuda_graphs=True,
    )
    model = engine.model
    graphed = model.graphs
    assert graphed is not None
    print(describe("cuda", dtype), flush=True)  # noqa: T201

    def batch64(graphs: GraphedDecoder | None) -> tuple[float, float, list[np.ndarray]]:
        model.graphs = graphs
        torch.cuda.synchronize()
        wall, cpu = time.perf_counter(), time.process_time()
        chunks = engine.synthesize(list(SENTENCES))
        torch.cuda.synchronize()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        audio = sum(chunk.duration for chunk in chunks)
        return audio / wall, cpu, [chunk.samples for chunk in chunks]

    for graphs in (None, graphed, graphed):  # warm-up: compile, then see and record each shape
        batch64(graphs)
    print(f"recorded {graphed.recorded} shapes while warming up")  # noqa: T201
    timed: dict[str, list[tuple[float, float]]] = {"compiled": [], "graphs": []}
    audio: dict[str, list[np.ndarray]] = {}
    for round_index in range(args.rounds):
        for label, graphs in (("compiled", None), ("graphs", graphed)):
            realtime, cpu, audio[label] = batch64(graphs)
            timed[label].append((realtime, cpu))
            print(f"round {round_index + 1} {label:<9} {realtime:7.1f}x realtime, {cpu * 1000:6.0f} ms CPU")  # noqa: T201
    best = {label: max(r for r, _ in rows) for label, rows in timed.items()}
    cpu_ms = {label: statistics.median(c for _, c in rows) * 1000 for label, rows in timed.items()}
    snrs = [_snr_db(a, b) for a, b in zip(audio["compiled"], audio["graphs"], strict=True)]
    print(  # noqa: T201
        f"{dtype} batch 64: compiled {best['compiled']:.0f}x, graphs {best['graphs']:.0f}x realtime "
        f"(best of {args.rounds}); CPU {cpu_ms['compiled']:.0f} -> {cpu_ms['graphs']:.0f} ms a call; "
        f"SNR graphs vs not: min {min(snrs):.1f} dB, median {statistics.median(snrs):.1f} dB; "
        f"{graphed.recorded} shapes recorded, {graphed.replayed} replays; "
        f"peak GPU memory {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB"
    )

    # The same padded batch through the decoder eagerly and through its graph's replay.
    key_batch, width = batch_bucket(5), frame_bucket(180)
    generator = torch.Generator(device="cuda").manual_seed(0)
    asr = torch.randn((5, 512, 180), device="cuda", generator=generator).to(
        model.decoder_dtype or torch.float32
    )
    f0 = torch.rand((5, 360), device="cuda", generator=generator) * 200
    energy = torch.randn((5, 360), device="cuda", generator=generator)
    style = torch.randn((5, 128), device="cuda", generator=generator).to(asr.dtype)
    frames = torch.tensor([180, 150, 120, 90, 60], device="cuda")
    probe = GraphedDecoder(model.decoder)
    with torch.inference_mode():
        inputs = padded_inputs(asr, f0, energy, style, frames, batch=key_batch, width=width)
        load(inputs, (asr, f0, energy, style, frames))
        eager = model.decoder(*inputs)[:5]
        for _ in range(3):
            replayed = probe(asr, f0, energy, style, frames)
    diff = (eager.float() - replayed.float()).abs().max().item()
    print(
        f"{dtype} decoder, one padded batch: eager vs replay max |diff| {diff:.3g} ({probe.recorded} recorded)"
    )  # noqa: T201

    first: dict[str, dict[int, float]] = {}
    for label, graphs in (("compiled", None), ("graphs", graphed)):
        model.graphs = graphs
        batched = BatchedEngine(engine, max_batch=max(args.streams))
        try:
            for _ in range(3):
                batched.synthesize([FIRST])
            first[label] = {}
            with ThreadPoolExecutor(max(args.streams)) as pool:
                for streams in args.streams:
                    rounds = []
                    for _ in range(args.repeats + 2):  # two more: the shape is seen, then recorded
                        start = time.perf_counter()
                        list(pool.map(lambda _, b=batched: b.synthesize([FIRST]), range(streams)))
                        rounds.append((time.perf_counter() - start) * 1000)
                    first[label][streams] = statistics.median(rounds[2:])
                    print(
                        f"{dtype} {label} first piece, {streams} streams: {', '.join(f'{r:.0f}' for r in rounds)} ms"
                    )  # noqa: T201
        finally:
            batched.close()
    return (
        f"{dtype}_batch64_compiled={best['compiled']:.0f} {dtype}_batch64_graphs={best['graphs']:.0f} "
        + " ".join(
            f"{dtype}_first_{label}_{n}_ms={ms:.0f}" for label, per in first.items() for n, ms in per.items()
        )
    )


if __name__ == "__main__":
    main()
