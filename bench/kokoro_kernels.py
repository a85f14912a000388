"""Kokoro's decoder chains on the CPU, eager against ``torch.compile`` (Inductor), float32, in
one process: the ratio of issue 24's speed item that needs no onnxruntime.

    PYTHONPATH=$PWD .venv/bin/python -m bench.kokoro_kernels

Both engines speak the same six English sentences (``bench.engine.SENTENCES``) with ``jm_kumo``
in one ``synthesize`` call; rounds alternate and each side keeps its best. CPU seconds (this
process's own) per audio second are the figure on a shared machine; wall RTF is printed too. The
last line: ``RESULT cpu_rtf_eager=<x> cpu_rtf_compiled=<y> ratio=<y/x> snr_db=<compiled against
eager>``; the SNR says whether the fused kernels change the audio (float32 reassociation only).
"""

from __future__ import annotations

import time

import numpy as np


def main() -> None:
    from bench.engine import SENTENCES
    from bench.machine import describe
    from speech.engines.kokoro import KokoroEngine
    from speech.engines.kokoro.voices import bundled_packs

    print(describe("cpu", "float32"), flush=True)  # noqa: T201
    pack = bundled_packs()["jm_kumo"]
    texts = list(SENTENCES[:6])
    engines = {
        name: KokoroEngine.load(pack, lang="en", espeak_voice="en-us", dtype="float32", compile_kernels=fused)
        for name, fused in (("eager", False), ("compiled", True))
    }
    for name, engine in engines.items():  # compiling (and eager's first-call costs) are not speed
        start = time.perf_counter()
        engine.synthesize(texts[:2])
        engine.synthesize(texts[2:4])
        print(f"{name}: warm-up {time.perf_counter() - start:.1f} s", flush=True)  # noqa: T201
    best = {name: float("inf") for name in engines}
    audio: dict[str, np.ndarray] = {}
    for round_ in range(3):
        for name, engine in engines.items():
            cpu, wall = time.process_time(), time.perf_counter()
            chunks = engine.synthesize(texts)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            seconds = sum(chunk.duration for chunk in chunks)
            best[name] = min(best[name], cpu / seconds)
            audio[name] = np.concatenate([chunk.samples for chunk in chunks])
            print(f"round {round_} {name}: cpu RTF {cpu / seconds:.3f}, wall RTF {wall / seconds:.3f}", flush=True)  # noqa: T201
    eager, fused = audio["eager"], audio["compiled"]
    n = min(len(eager), len(fused))
    noise = max(float(np.sum((eager[:n] - fused[:n]) ** 2)), 1e-30)
    snr = 10 * np.log10(float(np.sum(eager[:n] ** 2)) / noise)
    print(  # noqa: T201
        f"RESULT cpu_rtf_eager={best['eager']:.3f} cpu_rtf_compiled={best['compiled']:.3f} "
        f"ratio={best['compiled'] / best['eager']:.3f} snr_db={snr:.1f}"
    )


if __name__ == "__main__":
    main()
