"""The two public voice lists, in the vendor's shapes.

- ``/data/voices/all-v2.json``: ``{"<modelId>": {"<3-letter lang>": ["speaker", ...]}}``;
- ``/data/voices/voice_details.json``: one object per (voice, model) pair.

Plain data in, plain JSON-ready data out, so the facade only serialises.
"""

from __future__ import annotations

from speech.text.languages import SUPPORTED, legacy
from speech.voices.catalog import Catalog


def all_v2(catalog: Catalog) -> dict[str, dict[str, list[str]]]:
    """Speakers per model and legacy language code, languages in the vendor API contract's order."""
    listing: dict[str, dict[str, list[str]]] = {}
    for model_id in catalog.models:
        by_lang: dict[str, list[str]] = {}
        for code in SUPPORTED:
            speakers = [v.speaker for v in catalog.voices_of(model_id, code)]
            if speakers:
                by_lang[legacy(code)] = speakers
        listing[model_id] = by_lang
    return listing


def voice_details(catalog: Catalog) -> list[dict[str, object]]:
    """One entry per voice and model it belongs to, in catalog order."""
    details: list[dict[str, object]] = []
    for voice in catalog.voices:
        for model_id in voice.models:
            details.append(
                {
                    "speaker": voice.speaker,
                    "modelId": model_id,
                    "lang": voice.legacy_lang,
                    "language": voice.language,
                    "gender": voice.gender,
                    "age": voice.age,
                    "country": voice.country,
                    "dialect": voice.dialect,
                    "demographic": voice.demographic,
                    "genre": list(voice.genre),
                    "flagship": voice.flagship,
                }
            )
    return details
