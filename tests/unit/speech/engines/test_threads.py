"""One owner for torch's thread count (``speech/engines/threads.py``): engines claim what they run
on. The bug this guards: loading a VITS voice on onnxruntime set torch to one thread for the
whole process, so every Kokoro voice beside it ran on one core."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from speech.engines.registry import load_engine
from speech.engines.threads import claim_torch_threads, reset_claims, usable_cores
from speech.engines.vits import VitsEngine
from speech.voices import Catalog


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


@pytest.mark.parametrize("order", [["joe", "ivy"], ["ivy", "joe"]])
def test_kokoro_gets_every_core_beside_a_vits_voice_on_onnxruntime(order: list[str]) -> None:
    """Both voices through the loader the API and the synth worker use (``load_engine``), in one
    process, either order: torch runs at every usable core, also in a thread that first ran torch
    at one thread before the Kokoro voice was loaded (the count is per thread: an API engine
    thread, a worker thread). The count is read inside Kokoro's forward pass."""
    voices = {"joe": Catalog.load().voice("mistv3", "joe"), "ivy": Catalog.load().voice("coda", "ivy")}
    seen: list[int] = []

    def in_a_thread_that_ran_torch_at_one_thread() -> None:
        torch.set_num_threads(1)
        # torch sets a thread's OpenMP count on its first parallel work (or this read) from the
        # default of that moment, and keeps it: this thread now runs at one thread.
        at_start.append(torch.get_num_threads())
        started.set()
        loaded.wait()
        engines["ivy"].synthesize(["A sentence on all cores."])

    engines: dict[str, Any] = {}
    at_start: list[int] = []
    started, loaded = threading.Event(), threading.Event()
    thread = threading.Thread(target=in_a_thread_that_ran_torch_at_one_thread)
    thread.start()
    started.wait(timeout=60)
    try:
        for name in order:
            engines[name] = load_engine(voices[name], device="cpu", dtype="auto")
    finally:
        loaded.set()
    assert engines["joe"].runtime == "onnxruntime"
    assert torch.get_num_threads() == usable_cores()
    hook = engines["ivy"].model.register_forward_pre_hook(lambda *_: seen.append(torch.get_num_threads()))
    try:
        thread.join(timeout=600)
        engines["ivy"].synthesize(["And one on the loading thread."])
    finally:
        hook.remove()
    assert at_start == [1]
    assert seen == [usable_cores(), usable_cores()]
