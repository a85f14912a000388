"""The engine wrapper that records synthesis time and audio seconds keeps what callers ask of
engines: whether they take phonemes, their attributes, and their class per kind."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY

from lector.engine_metrics import instrument
from speech.engines.vits import VitsEngine
from tests.support.fake_engine import ToneEngine


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_phoneme_support_and_attributes_pass_through(vits_engine: VitsEngine) -> None:
    tone = instrument(ToneEngine(), kind="tone", device="cpu")
    vits = instrument(vits_engine, kind="vits", device="cpu")
    assert getattr(tone, "synthesize_phonemes", None) is None  # Synthesizer.speaks_phonemes asks this way
    assert callable(getattr(vits, "synthesize_phonemes", None))
    assert vits.sample_rate == vits_engine.sample_rate
    assert type(tone) is not type(vits)  # the model service warms each kind of engine once


def test_calls_are_timed_and_audio_counted(vits_engine: VitsEngine) -> None:
    vits = instrument(vits_engine, kind="vits", device="cpu")
    calls, audio = _sample("lector_synthesis_seconds_count", engine="vits", device="cpu"), _sample(
        "lector_audio_seconds_total", engine="vits", device="cpu")
    chunks = vits.synthesize(["Counted once.", "And twice."])
    ipa = vits.synthesize_phonemes([vits_engine.phonemize("Hello.")])
    assert _sample("lector_synthesis_seconds_count", engine="vits", device="cpu") == calls + 2
    made = sum(c.duration for c in chunks) + sum(c.duration for c in ipa)
    assert abs(_sample("lector_audio_seconds_total", engine="vits", device="cpu") - audio - made) < 1e-6


def test_gpu_memory_is_reported_only_for_gpu_engines() -> None:
    instrument(ToneEngine(), kind="tone", device="cpu")
    assert not [s for m in REGISTRY.collect() if m.name == "lector_gpu_memory_bytes" for s in m.samples
                if s.labels["device"] == "cpu"]


def test_gpu_memory_follows_what_torch_holds_on_the_device() -> None:
    """Runs where there is a GPU (a CUDA build of torch and a device); skipped on CPU machines."""
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device here")
    instrument(ToneEngine(), kind="tone", device="cuda:0")
    before = _sample("lector_gpu_memory_bytes", device="cuda:0")
    held = torch.empty(64 * 1024 * 1024, dtype=torch.uint8, device="cuda:0")  # 64 MiB
    assert _sample("lector_gpu_memory_bytes", device="cuda:0") >= before + held.numel()
    del held
    torch.cuda.empty_cache()
    assert _sample("lector_gpu_memory_bytes", device="cuda:0") == before
