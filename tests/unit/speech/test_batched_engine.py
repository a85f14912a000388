"""The shared batcher in-process: concurrent calls from request threads share forward passes,
and batched equals unbatched in float32, on the real voice (joe, our PyTorch VITS, on CPU with
batching forced on as a GPU host has it by default)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from lector.settings import Settings
from lector.wiring import build_catalog, build_synthesizer
from speech.batched_engine import BatchedEngine
from speech.engines.vits import VitsEngine
from speech.synthesizer import Controls
from speech.types import SynthesisOptions

ZERO_NOISE = SynthesisOptions(noise_scale=0.0, noise_w=0.0)
SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello there!",
    "She counted the steps twice before she opened the heavy wooden door.",
    "Yes.",
    "At last the train arrived, three hours late and almost empty.",
    "Nobody could remember a winter quite as cold as this one.",
]


@pytest.fixture(scope="module")
def torch_engine(joe_paths: tuple[Path, Path]) -> VitsEngine:
    return VitsEngine.load(*joe_paths, device="cpu", threads=1, runtime="torch")


def _concurrently(engine: BatchedEngine, sentences: list[str]) -> list[np.ndarray]:
    """Each sentence from a thread of its own, released together (as concurrent requests)."""
    start = threading.Barrier(len(sentences))

    def call(sentence: str) -> np.ndarray:
        start.wait()
        return engine.synthesize([sentence], ZERO_NOISE)[0].samples

    with ThreadPoolExecutor(len(sentences)) as pool:
        return list(pool.map(call, sentences))


def test_concurrent_calls_share_a_forward_pass_and_equal_unbatched(torch_engine: VitsEngine) -> None:
    alone = [torch_engine.synthesize([s], ZERO_NOISE)[0].samples for s in SENTENCES]
    passes: list[int] = []
    hook = torch_engine.model.register_forward_hook(lambda module, args, out: passes.append(len(args[0])))
    batched = BatchedEngine(torch_engine, window_ms=300, max_batch=16)
    try:
        together = _concurrently(batched, SENTENCES)
    finally:
        hook.remove()
        batched.stop()  # the engine stays open for the other tests
    assert batched.batcher.stats.items == len(SENTENCES)
    assert batched.batcher.stats.largest > 1  # calls from different threads met in one batch
    assert len(passes) < len(SENTENCES) and max(passes) > 1  # ... and in one forward pass
    for a, b in zip(alone, together, strict=True):
        assert a.shape == b.shape
        assert float(np.abs(a - b).max()) < 1e-4  # float32: batched is unbatched, to rounding


def test_a_call_as_large_as_a_batch_skips_the_window() -> None:
    from tests.support.fake_engine import ToneEngine

    engine = ToneEngine()
    batched = BatchedEngine(engine, window_ms=2000, max_batch=4)
    try:
        chunks = batched.synthesize([f"sentence {i}." for i in range(6)])
        assert [c.text for c in chunks] == [f"sentence {i}." for i in range(6)]
        assert [len(sentences) for sentences, _ in engine.calls] == [6]  # one call, not cut to 4
        assert batched.batcher.stats.batches == 0  # and not through the 2 s window
        assert batched.synthesize([]) == []
        assert not callable(getattr(batched, "synthesize_phonemes", None))  # ToneEngine has none
        assert batched.sample_rate == engine.sample_rate and batched.phonemize("Ab") == "ab"
    finally:
        batched.close()


def test_the_setting_puts_in_process_voices_behind_the_batcher(tmp_path: Path) -> None:
    def joe(**settings: object):  # type: ignore[no-untyped-def]
        config = Settings(data_dir=tmp_path, device="cpu", torch_threads=1, model_window_ms=200, **settings)
        voice = build_catalog(config).resolve("mistv3", "joe", "en")
        synthesizer = build_synthesizer(config)
        return synthesizer, voice, synthesizer.engine(voice)

    assert not isinstance(joe()[2], BatchedEngine)  # auto: off on CPU, today's behaviour
    assert not isinstance(joe(engine_batching="off")[2], BatchedEngine)
    synthesizer, voice, engine = joe(engine_batching="on")
    assert isinstance(engine, BatchedEngine)
    try:
        start = threading.Barrier(4)

        def speak(sentence: str) -> float:
            start.wait()
            return synthesizer.synthesize(voice, [sentence], Controls())[0].duration

        with ThreadPoolExecutor(4) as pool:
            durations = list(pool.map(speak, SENTENCES[:4]))
        assert all(d > 0.3 for d in durations)
        # Synthesizer does not serialize the calls: they met in the batcher.
        assert engine.batcher.stats.largest > 1
        assert callable(engine.synthesize_phonemes)  # joe takes IPA, batched as well
        assert engine.synthesize_phonemes(["həloʊ"])[0].duration > 0.1
    finally:
        engine.close()
