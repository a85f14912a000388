"""The API warms the catalog's default voice before serving, whatever the catalog holds."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from facade.app import warm_up
from facade.deps import Services, Speech
from speech.voices import Catalog


class Recording:
    def __init__(self) -> None:
        self.voices: list[tuple[str, str]] = []

    def synthesize(self, voice: Any, sentences: list[str], controls: object = None) -> list[object]:
        self.voices.append((voice.speaker, voice.lang))
        return []


def _warmed(catalog: Catalog) -> list[tuple[str, str]]:
    synthesizer = Recording()
    services = Services(speech=Speech(catalog=catalog, synthesizer=synthesizer))  # type: ignore[arg-type]
    warm_up(services)
    return synthesizer.voices


def test_the_default_model_s_first_voice_is_warmed() -> None:
    shipped = Catalog.load()
    first = shipped.voices_of(None)[0]
    assert _warmed(shipped) == [(first.speaker, first.lang)]
    without = replace(shipped, voices=tuple(v for v in shipped.voices if v.speaker != first.speaker))
    second = without.voices_of(None)[0]
    assert second.speaker != first.speaker
    assert _warmed(without) == [(second.speaker, second.lang)]
    spanish_first = replace(shipped, voices=tuple(v for v in shipped.voices if v.lang != "en"))
    assert _warmed(spanish_first)[0][1] != "en"  # the voice's own language, not a hard-coded "en"


def test_a_model_without_voices_is_not_warmed() -> None:
    empty = replace(Catalog.load(), voices=())
    assert _warmed(empty) == []
