"""One owner for torch's thread count (``speech/engines/threads.py``): engines claim what they run
on. The bug this guards: loading a VITS voice on onnxruntime set torch to one thread for the
whole process, so every Kokoro voice beside it ran on one core."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from speech.engines.threads import claim_torch_threads, reset_claims, usable_cores
from speech.engines.vits import VitsEngine


@pytest.fixture(autouse=True)
def _fresh_claims() -> Iterator[None]:
    before = torch.get_num_threads()
    reset_claims()
    yield
    reset_claims()
    torch.set_num_threads(before)


def test_a_vits_voice_on_onnxruntime_leaves_torch_threads_alone(joe_paths: tuple[Path, Path]) -> None:
    torch.set_num_threads(2)
    engine = VitsEngine.load(*joe_paths, device="cpu", runtime="onnxruntime")
    assert engine.runtime == "onnxruntime"
    assert torch.get_num_threads() == 2


def test_a_vits_voice_on_torch_runs_single_threaded_workers(joe_paths: tuple[Path, Path]) -> None:
    torch.set_num_threads(2)
    VitsEngine.load(*joe_paths, device="cpu", runtime="torch")
    assert torch.get_num_threads() == 1


def test_intra_op_wins_over_single_whatever_the_order() -> None:
    assert claim_torch_threads("single") == 1
    assert claim_torch_threads("intra_op") == usable_cores()
    assert claim_torch_threads("single") == usable_cores()  # a later VITS torch voice keeps Kokoro's cores


def test_intra_op_takes_the_configured_count() -> None:
    assert claim_torch_threads("intra_op", 1) == 1
    reset_claims()
    assert claim_torch_threads("intra_op", 0) == usable_cores()
