"""``tests/support/memory.py``: a worker drops the models its caches hold after each file, and
does the costly collection only when there was one to drop."""

from __future__ import annotations

import functools

from speech.engines.kokoro import engine as kokoro_engine
from speech.text import arabic_vowels
from tests.support.memory import release_models


def test_cached_models_are_dropped_and_an_empty_cache_costs_nothing(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    release_models()  # whatever earlier files left
    assert not release_models()  # nothing held: no collection
    monkeypatch.setitem(kokoro_engine._models, ("cpu", "float32", False), object())  # type: ignore[arg-type]
    calls = []

    @functools.cache
    def diacritizer() -> object:
        calls.append(1)
        return object()

    monkeypatch.setattr(arabic_vowels, "_diacritizer", diacritizer)
    diacritizer()
    assert release_models()
    assert not kokoro_engine._models and diacritizer.cache_info().currsize == 0
    diacritizer()
    assert len(calls) == 2  # loaded again on the next use
    assert release_models() and not release_models()
