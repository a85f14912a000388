"""Voices: the catalog (model ids -> voices -> engine + weights) and the public voice lists."""

from speech.voices.catalog import DEFAULT_MODEL, Catalog, VoiceCatalog, default_catalog_path
from speech.voices.entries import Model, Voice
from speech.voices.listing import all_v2, voice_details

__all__ = [
    "Catalog",
    "DEFAULT_MODEL",
    "Model",
    "Voice",
    "VoiceCatalog",
    "all_v2",
    "default_catalog_path",
    "voice_details",
]
