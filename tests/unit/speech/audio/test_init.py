"""The public API of speech.audio: complete, sorted, importable."""

from __future__ import annotations

from types import ModuleType

import speech.audio as audio


def test_all_is_sorted_and_importable() -> None:
    assert audio.__all__ == sorted(audio.__all__)
    assert len(set(audio.__all__)) == len(audio.__all__)
    for name in audio.__all__:
        assert hasattr(audio, name), name


def test_all_lists_every_public_name_imported() -> None:
    public = {n for n, v in vars(audio).items() if not n.startswith("_") and not isinstance(v, ModuleType)}
    assert public == set(audio.__all__)
