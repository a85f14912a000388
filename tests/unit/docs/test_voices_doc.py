"""docs/voices.md names every voice of the shipped catalog, in its language's row, with the
Kokoro pack it speaks with: a voice added, renamed or given another pack makes the page stale."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
PAGE = (ROOT / "docs" / "voices.md").read_text()
VOICES: list[dict[str, Any]] = tomllib.loads((ROOT / "speech" / "voices" / "catalog.toml").read_text())["voices"]


def _row(lang: str) -> str:
    (row,) = [line for line in PAGE.splitlines() if line.startswith("| ") and f"(`{lang}`)" in line]
    return row


def _pack(voice: dict[str, Any]) -> str:
    pack = voice["pack"]
    return " + ".join(f"{name} {weight}" for name, weight in pack.items()) if isinstance(pack, dict) else str(pack)


@pytest.mark.parametrize("voice", VOICES, ids=lambda v: f"{v['lang']}-{v['speaker']}")
def test_every_catalog_voice_is_in_its_language_s_row(voice: dict[str, Any]) -> None:
    row = _row(voice["lang"])
    assert f"`{voice['speaker']}`" in row
    if voice["engine"] == "kokoro":
        assert f"`{voice['speaker']}` ({voice['gender'][0].lower()}, {_pack(voice)})" in row
    if voice["engine"] == "espeak":
        assert f"`{voice['speaker']}` (formant)" in row
