"""The cloud facade's synthesizer comes from settings: in-process engines, or the model service
at ``MODEL_URL`` for neural voices with the formant fallbacks still in-process."""

from __future__ import annotations

from typing import Any

from facade.remote_engine import RemoteSynthesizer
from lector.api import cloud_synthesizer
from lector.settings import Settings


class _Local:
    """Stands in for the in-process synthesizer (building the real one loads nothing yet either)."""


def test_without_model_url_the_engines_are_in_process() -> None:
    built: list[Any] = []
    synthesizer = cloud_synthesizer(Settings(), lambda s: built.append(s) or _Local())
    assert isinstance(synthesizer, _Local) and len(built) == 1


def test_model_url_routes_neural_voices_to_the_model_service() -> None:
    from speech.voices import Catalog

    settings = Settings(model_url="http://127.0.0.1:9/invocations")  # nothing listens: no call is made here
    local = _Local()
    synthesizer = cloud_synthesizer(settings, lambda s: local)
    assert isinstance(synthesizer, RemoteSynthesizer)
    catalog = Catalog.load()
    assert synthesizer._remote_voice(catalog.resolve("mistv3", "joe", "en"))
    assert synthesizer._remote_voice(catalog.resolve("mistv3", "julien", "fr"))  # Kokoro: neural too
    assert synthesizer._remote_voice(catalog.resolve("coda", "owen", "en"))
    assert not synthesizer._remote_voice(catalog.resolve("mistv3", "walter", "en"))  # formant: stays local
    synthesizer.close()


def test_engine_slots_are_one_per_core_in_process_and_many_for_a_model_service() -> None:
    """In-process steps keep a core each busy; steps to a model service wait for its batches, so
    as many run at once as its batches can gather, on threads started with the API."""
    import os

    from lector.api import REMOTE_ENGINE_SLOTS, engine_slots_for

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    remote = Settings(model_url="http://127.0.0.1:9/invocations")
    assert engine_slots_for(Settings()) == cores
    assert engine_slots_for(remote) == REMOTE_ENGINE_SLOTS >= 64
    assert engine_slots_for(Settings(engine_slots=3, model_url="http://127.0.0.1:9/invocations")) == 3
    assert engine_slots_for(Settings(engine_slots=0)) == 0
