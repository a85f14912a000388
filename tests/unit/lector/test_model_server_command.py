"""Which catalog voices ``lector model-server --voice`` serves: one, a list, or every neural one."""

from __future__ import annotations

import pytest
import typer

from lector.commands.model_server import find_voices
from speech.voices import Catalog


def test_voice_specs() -> None:
    catalog = Catalog.load()
    assert [v.speaker for v in find_voices(catalog, "joe")] == ["joe"]
    assert [v.speaker for v in find_voices(catalog, " julien, joe,julien ")] == ["julien", "joe"]
    neural = find_voices(catalog, "neural")
    engines = {v.engine for v in neural}
    assert engines == {"vits", "kokoro"}  # never the formant fallbacks: they stay in the API process
    assert {"joe", "owen", "julien", "sakura", "layla"} <= {v.speaker for v in neural}
    assert len({v.speaker for v in neural}) == len(neural)
    with pytest.raises(typer.BadParameter, match="nobody"):
        find_voices(catalog, "joe,nobody")
    with pytest.raises(typer.BadParameter):
        find_voices(catalog, " , ")


def test_the_model_service_engines_do_not_batch_twice(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The service's own Batcher gathers requests; an engine behind a second one (as in-process
    voices have with LECTOR_ENGINE_BATCHING=on) would hold each batch for a second window."""
    from lector.commands.model_server import engine_factories
    from lector.settings import Settings
    from speech.batched_engine import BatchedEngine
    from speech.engines.vits import VitsEngine

    settings = Settings(data_dir=tmp_path, device="cpu", torch_threads=1, engine_batching="on")
    engine = engine_factories(settings, "joe")["joe"]()
    inner = getattr(engine, "_inner", engine)  # the metrics wrapper (lector.engine_metrics) is not a batcher
    assert isinstance(inner, VitsEngine) and not isinstance(engine, BatchedEngine)
