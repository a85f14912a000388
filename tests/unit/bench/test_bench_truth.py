"""The benches tell the truth: p95 only over enough samples, and the machine named with every
figure (``bench.latency --embedded``'s own servers are checked in ``tests/integration/bench``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import torch

from bench.machine import cpu_model, describe
from bench.percentiles import MIN_P95_SAMPLES, fmt, p95, rounds_for_p95

BENCH = Path(__file__).resolve().parents[3] / "bench"


def test_p95_refuses_too_few_samples() -> None:
    assert p95([10.0, 20.0, 30.0]) is None  # --quick's three requests: their max is no p95
    assert p95(list(range(16))) is None  # one round of 16 streams
    assert fmt(None) == "      n/a"


def test_p95_is_the_nearest_rank_with_enough_samples() -> None:
    assert p95([float(v) for v in range(1, MIN_P95_SAMPLES + 1)]) == 19.0  # not the maximum, 20
    assert p95([float(v) for v in range(100, 0, -1)]) == 95.0


@pytest.mark.parametrize(("concurrency", "rounds"), [(1, 20), (4, 5), (16, 2), (64, 1)])
def test_concurrent_rows_run_enough_rounds_for_a_p95(concurrency: int, rounds: int) -> None:
    assert rounds_for_p95(concurrency) == rounds
    assert p95([1.0] * (concurrency * rounds)) is not None


def test_the_machine_line_names_device_dtype_torch_cpu_and_cores() -> None:
    line = describe("cpu", "float32")
    cores = len(os.sched_getaffinity(0))
    assert line.startswith("MACHINE device=cpu dtype=float32 ")
    assert f"torch={torch.__version__}" in line
    assert f'cpu="{cpu_model()}"' in line and cpu_model() != "unknown CPU"
    assert f"cores={cores}" in line
    assert re.search(r"load=\d+\.\d\d/\d+\.\d\d/\d+\.\d\d", line)


@pytest.mark.parametrize(
    "module", ["engine.py", "engine_kokoro.py", "latency.py", "book.py", "book_gpu.py", "model_server.py", "usage.py",
               "outbox.py"]
)
def test_every_bench_prints_the_machine_line(module: str) -> None:
    assert "print(describe(" in (BENCH / module).read_text()
