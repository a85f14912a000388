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
