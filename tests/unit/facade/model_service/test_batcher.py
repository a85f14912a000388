"""The batcher with a fake engine: batches form, the window and the cap hold, failures reach everyone."""

from __future__ import annotations

import asyncio
import time

import pytest

from speech.batcher import Batcher
from speech.types import SynthesisOptions
from tests.support.fake_engine import ToneEngine


async def _run(batcher: Batcher, sentences: list[str], options: SynthesisOptions | None = None) -> list[int]:
    futures = batcher.submit(sentences, options or SynthesisOptions())
    return [size for _, size in await asyncio.gather(*futures)]


async def test_concurrent_requests_run_as_one_batch() -> None:
    engine = ToneEngine(delay_s=0.01)
    batcher = Batcher(engine, window_ms=30, max_batch=16)
    batcher.start()
    try:
        sizes = await asyncio.gather(*(_run(batcher, [f"request number {i}."]) for i in range(16)))
    finally:
        await batcher.stop()
    assert batcher.stats.batches < 16
    assert batcher.stats.items == 16
    assert sum(len(sentences) for sentences, _ in engine.calls) == 16
    assert max(s[0] for s in sizes) > 1


async def test_max_batch_caps_every_call() -> None:
    engine = ToneEngine(delay_s=0.01)
    batcher = Batcher(engine, window_ms=50, max_batch=16)
    batcher.start()
    try:
        await asyncio.gather(*(_run(batcher, [f"item {i}."]) for i in range(40)))
    finally:
        await batcher.stop()
    sizes = [len(sentences) for sentences, _ in engine.calls]
    assert sum(sizes) == 40
    assert max(sizes) == 16
    assert len(sizes) >= 3


async def test_a_lone_request_is_held_at_most_the_window() -> None:
    engine = ToneEngine()
    batcher = Batcher(engine, window_ms=150, max_batch=16)
    batcher.start()
    try:
        start = time.monotonic()
        await _run(batcher, ["alone."])
        waited = time.monotonic() - start
    finally:
        await batcher.stop()
    assert 0.13 <= waited < 0.6  # the window, plus scheduling, never much more


async def test_a_full_batch_leaves_before_its_window() -> None:
    engine = ToneEngine()
    batcher = Batcher(engine, window_ms=5000, max_batch=4)
    batcher.start()
    try:
        start = time.monotonic()
        await asyncio.gather(*(_run(batcher, [f"s{i}."]) for i in range(4)))
        waited = time.monotonic() - start
    finally:
        await batcher.stop()
    assert waited < 1.0
    assert [len(s) for s, _ in engine.calls] == [4]


async def test_different_scales_do_not_share_a_call() -> None:
    engine = ToneEngine()
    batcher = Batcher(engine, window_ms=50, max_batch=16)
    batcher.start()
    try:
        await asyncio.gather(
            _run(batcher, ["slow one."], SynthesisOptions(length_scale=1.5)),
            _run(batcher, ["normal one."]),
            _run(batcher, ["normal two."]),
        )
    finally:
        await batcher.stop()
    by_scale = {options.length_scale if options else None: sorted(s) for s, options in engine.calls}
    assert by_scale == {1.5: ["slow one."], None: ["normal one.", "normal two."]}


async def test_batching_off_runs_each_request_alone() -> None:
    engine = ToneEngine(delay_s=0.005)
    batcher = Batcher(engine, window_ms=0, max_batch=1)
    batcher.start()
    try:
        await asyncio.gather(*(_run(batcher, [f"r{i}."]) for i in range(8)))
    finally:
        await batcher.stop()
    assert [len(s) for s, _ in engine.calls] == [1] * 8


async def test_a_failed_batch_fails_each_waiter_and_the_next_batch_runs() -> None:
    engine = ToneEngine(fail_on="boom")
    batcher = Batcher(engine, window_ms=30, max_batch=16)
    batcher.start()
    try:
        results = await asyncio.gather(_run(batcher, ["boom."]), _run(batcher, ["fine."]), return_exceptions=True)
        assert all(isinstance(r, RuntimeError) for r in results)
        assert await _run(batcher, ["fine again."]) == [1]
    finally:
        await batcher.stop()


def test_rejects_nonsense_settings() -> None:
    with pytest.raises(ValueError):
        Batcher(ToneEngine(), window_ms=-1)
    with pytest.raises(ValueError):
        Batcher(ToneEngine(), max_batch=0)


async def test_phoneme_requests_batch_apart_and_reach_synthesize_phonemes() -> None:
    class PhonemeToneEngine(ToneEngine):
        def __init__(self) -> None:
            super().__init__()
            self.phoneme_calls: list[list[str]] = []

        def synthesize_phonemes(self, strings, options=None):  # type: ignore[no-untyped-def]
            self.phoneme_calls.append(list(strings))
            return ToneEngine.synthesize(self, strings, options)

    engine = PhonemeToneEngine()
    batcher = Batcher(engine, window_ms=50, max_batch=16)
    batcher.start()
    try:
        text = batcher.submit(["plain words one.", "plain words two."], SynthesisOptions())
        ipa = batcher.submit(["həlˈoʊ", "wˈɜːld"], SynthesisOptions(), ipa=True)
        await asyncio.gather(*text, *ipa)
    finally:
        await batcher.stop()
    assert engine.phoneme_calls == [["həlˈoʊ", "wˈɜːld"]]
    assert [sentences for sentences, _ in engine.calls if "plain words one." in sentences] == [
        ["plain words one.", "plain words two."]
    ]


async def test_voices_batch_apart_each_on_its_own_engine() -> None:
    first, second = ToneEngine(delay_s=0.01), ToneEngine(delay_s=0.01)
    batcher = Batcher({"a": first, "b": second, "b-alias": second}, window_ms=50, max_batch=16)
    batcher.start()
    try:
        futures = [
            *batcher.submit(["a one.", "a two."], SynthesisOptions(), voice="a"),
            *batcher.submit(["b one."], SynthesisOptions(), voice="b"),
            *batcher.submit(["b two."], SynthesisOptions(), voice="b-alias"),
            *batcher.submit(["default."], SynthesisOptions()),
        ]
        results = await asyncio.gather(*futures)
        with pytest.raises(KeyError):
            batcher.submit(["nobody."], SynthesisOptions(), voice="c")
    finally:
        await batcher.stop()
    assert [chunk.text for chunk, _ in results] == ["a one.", "a two.", "b one.", "b two.", "default."]
    assert [sentences for sentences, _ in first.calls] == [["a one.", "a two.", "default."]]
    assert [sentences for sentences, _ in second.calls] == [["b one.", "b two."]]  # names sharing an engine batch
    assert batcher.engine_for("c") is None and batcher.engine_for(None) is first
