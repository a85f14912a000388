"""Alternating timed rounds, shared by the engine benchmarks.

Each round runs every contender once, in turn, so that load from other processes hits them
alike; each keeps its best round (RTF = wall seconds / audio seconds).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

Run = Callable[[Sequence[str]], float]  # sentences -> seconds of audio made


def alternate(
    runs: Mapping[str, Run], sentences: Sequence[str], rounds: int, *, sync: Callable[[], None] | None = None
) -> tuple[dict[str, float], dict[str, float]]:
    """Best RTF and audio seconds per run label; ``sync`` waits for a device before each clock."""
    best: dict[str, float] = {}
    audio_of: dict[str, float] = {}
    width = max(map(len, runs)) + 2
    for round_index in range(rounds):
        for label, run in runs.items():
            if sync is not None:
                sync()
            start = time.perf_counter()
            audio_seconds = run(sentences)
            if sync is not None:
                sync()
            elapsed = time.perf_counter() - start
            rtf = elapsed / audio_seconds
            best[label] = min(best.get(label, rtf), rtf)
            audio_of[label] = audio_seconds
            print(  # noqa: T201 - a benchmark's report
                f"round {round_index + 1}  {label:<{width}} {elapsed:7.2f} s for {audio_seconds:6.1f} s of audio"
                f"  RTF {rtf:.4f}"
            )
    return best, audio_of


def onnxruntime_session(path: str, threads: int, device: str):  # type: ignore[no-untyped-def]
    """The reference runtime: onnxruntime with ``threads`` intra-op threads, on its CUDA provider
    when ``device`` is cuda and the installed build has one (else on the CPU)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    providers = ["CPUExecutionProvider"]
    if device == "cuda" and "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        providers.insert(0, "CUDAExecutionProvider")
    return onnxruntime.InferenceSession(path, options, providers=providers)


def kokoro_reference(session, ids: Sequence[int], pack) -> np.ndarray:  # type: ignore[no-untyped-def]
    """One sentence's audio from Kokoro's shipped int8 graph on onnxruntime (``session``): its
    token ids framed by the pad token, the pack's style for that length, speed 1."""
    import numpy as np

    audio = session.run(
        None,
        {
            "tokens": np.array([[0, *ids, 0]], dtype=np.int64),
            "style": pack[len(ids) - 1].reshape(1, 256).astype(np.float32),
            "speed": np.array([1.0], dtype=np.float32),
        },
    )[0]
    return np.asarray(audio, dtype=np.float32).reshape(-1)
