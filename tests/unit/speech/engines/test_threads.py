"""One owner for torch's thread count (``speech/engines/threads.py``): engines claim what they run
on. The bug this guards: loading a VITS voice on onnxruntime set torch to one thread for the
whole process, so every Kokoro voice beside it ran on one core. And one thread for the passes:
a Kokoro voice's loading and forward passes on a CPU run on the process's torch thread, whoever
calls, so OpenMP keeps one team (two on two cores ran every pass throttled)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from speech.engines.registry import load_engine
from speech.engines.threads import claim_torch_threads, on_torch_thread, reset_claims, usable_cores
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


def test_every_kokoro_pass_and_its_loading_run_on_the_one_torch_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """From the main thread and from two others, the forward passes (and the model's loading)
    run on one thread, neither caller's, at the rule's count."""
    from speech.engines.kokoro import engine as kokoro_engine

    monkeypatch.setattr(kokoro_engine, "_models", {})  # a model of this test's own, so its loading is seen
    loads: list[str] = []
    model_class = kokoro_engine.KokoroModel

    def recorded() -> Any:
        loads.append(threading.current_thread().name)
        return model_class()

    monkeypatch.setattr(kokoro_engine, "KokoroModel", recorded)
    engine = load_engine(Catalog.load().voice("coda", "ivy"), device="cpu", dtype="float32")
    passes: list[tuple[str, int]] = []
    hook = engine.model.register_forward_pre_hook(
        lambda *_: passes.append((threading.current_thread().name, torch.get_num_threads()))
    )
    callers = [threading.Thread(target=engine.synthesize, args=(["A short one."],), name=f"caller-{n}") for n in range(2)]
    try:
        engine.synthesize(["From the main thread."])
        for caller in callers:
            caller.start()
            caller.join(timeout=300)
    finally:
        hook.remove()
    assert len(passes) == 3
    assert {name for name, _ in passes} == set(loads) and len(loads) == 1
    assert loads[0].startswith("torch") and loads[0] != threading.current_thread().name
    assert {count for _, count in passes} == {usable_cores()}


def test_the_torch_thread_returns_results_raises_errors_and_runs_its_own_calls_in_place() -> None:
    assert on_torch_thread(lambda: threading.current_thread().name).startswith("torch")
    inner = on_torch_thread(lambda: on_torch_thread(lambda: threading.current_thread().name))
    assert inner.startswith("torch")  # no deadlock: a call from the torch thread runs where it is

    def fails() -> None:
        raise ValueError("from the torch thread")

    with pytest.raises(ValueError, match="from the torch thread"):
        on_torch_thread(fails)
