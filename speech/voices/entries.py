"""The catalog's two record types, ``Model`` and ``Voice``, and their validation.

Each is a frozen dataclass built by ``from_dict`` from one TOML table. Validation is strict on
purpose: an unknown key is an error (a typo such as ``weigths`` must not silently leave a voice
without weights), and every message names the entry so a broken catalog is fixed in one look.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal

from speech.errors import CatalogError
from speech.text.languages import LANGUAGES, espeak_voice

Engine = Literal["vits", "espeak"]
ENGINES: Final[frozenset[str]] = frozenset({"vits", "espeak"})
QUALITIES: Final[frozenset[str]] = frozenset({"neural", "formant"})
_SPEAKER: Final = re.compile(r"[a-z0-9][a-z0-9_.\-]*")
_MODEL_ID: Final = re.compile(r"[a-z0-9][a-z0-9_.\-]*")


def _str(table: Mapping[str, Any], key: str, where: str, *, default: str | None = None) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or (default is None and not value.strip()):
        raise CatalogError(f"{where}: {key} must be a non-empty string, got {value!r}")
    return value


def _bool(table: Mapping[str, Any], key: str, where: str, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise CatalogError(f"{where}: {key} must be true or false, got {value!r}")
    return value


def _strings(table: Mapping[str, Any], key: str, where: str, *, required: bool) -> tuple[str, ...]:
    value = table.get(key, [] if not required else None)
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise CatalogError(f"{where}: {key} must be a list of strings, got {value!r}")
    if required and not value:
        raise CatalogError(f"{where}: {key} must not be empty")
    return tuple(value)


def _no_unknown_keys(table: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise CatalogError(f"{where}: unknown key(s) {', '.join(unknown)}")


@dataclass(frozen=True, slots=True)
class Model:
    id: str
    name: str
    description: str = ""
    json_representation: bool = False
    """Only ``mist`` and ``mistv2`` answer ``Accept: application/json`` (seed, Accept rule 3)."""
    deprecated: bool = False
    served_by: str | None = None
    """In cloud mode, requests for this model are served by that model from ``switch_at`` on."""
    switch_at: datetime | None = None

    _KEYS = frozenset({"name", "description", "json_representation", "deprecated", "served_by", "switch_at"})

    @classmethod
    def from_dict(cls, model_id: str, table: Mapping[str, Any]) -> Model:
        where = f"models.{model_id}"
        if not isinstance(table, Mapping):
            raise CatalogError(f"{where}: must be a table")
        if not _MODEL_ID.fullmatch(model_id):
            raise CatalogError(f"{where}: model id must be lower-case letters, digits, '-', '_' or '.'")
        _no_unknown_keys(table, cls._KEYS, where)
        served_by = table.get("served_by")
        switch_at = table.get("switch_at")
        if (served_by is None) != (switch_at is None):
            raise CatalogError(f"{where}: served_by and switch_at go together")
        if served_by is not None and not isinstance(served_by, str):
            raise CatalogError(f"{where}: served_by must be a model id, got {served_by!r}")
        if switch_at is not None:
            if not isinstance(switch_at, datetime) or switch_at.tzinfo is None:
                raise CatalogError(
                    f"{where}: switch_at must be a date-time with a UTC offset, got {switch_at!r}"
                )
            switch_at = switch_at.astimezone(UTC)
        return cls(
            id=model_id,
            name=_str(table, "name", where, default=model_id),
            description=_str(table, "description", where, default=""),
            json_representation=_bool(table, "json_representation", where, False),
            deprecated=_bool(table, "deprecated", where, False),
            served_by=served_by,
            switch_at=switch_at,
        )


@dataclass(frozen=True, slots=True)
class Voice:
    speaker: str
    models: tuple[str, ...]
    lang: str
    """Canonical 2-letter API language."""
    gender: str
    age: str
    country: str
    dialect: str
    demographic: str
    genre: tuple[str, ...]
    flagship: bool
    engine: Engine
    quality: str
    espeak_voice: str
    weights: str | None = None
    """``package:<module>``, ``s3://<key>`` or a local path; ``None`` for eSpeak voices."""

    _KEYS = frozenset(
        {
            "speaker",
            "models",
            "lang",
            "gender",
            "age",
            "country",
            "dialect",
            "demographic",
            "genre",
            "flagship",
            "engine",
            "quality",
            "weights",
            "espeak_voice",
        }
    )

    @property
    def key(self) -> str:
        """What identifies the engine instance: voices sharing weights share one loaded engine."""
        return f"vits:{self.weights}" if self.engine == "vits" else f"espeak:{self.espeak_voice}"

    @property
    def legacy_lang(self) -> str:
        return LANGUAGES[self.lang].legacy

    @property
    def language(self) -> str:
        return LANGUAGES[self.lang].name

    @property
    def weights_kind(self) -> Literal["package", "s3", "path"] | None:
        if self.weights is None:
            return None
        if self.weights.startswith("package:"):
            return "package"
        return "s3" if self.weights.startswith("s3://") else "path"

    @classmethod
    def from_dict(cls, table: Mapping[str, Any], index: int, known_models: frozenset[str]) -> Voice:
        if not isinstance(table, Mapping):
            raise CatalogError(f"voices[{index}]: must be a table")
        speaker = table.get("speaker")
        where = f"voices[{index}] (speaker {speaker!r})"
        if not isinstance(speaker, str) or not _SPEAKER.fullmatch(speaker):
            raise CatalogError(f"{where}: speaker must be lower-case letters, digits, '-', '_' or '.'")
        _no_unknown_keys(table, cls._KEYS, where)

        models = _strings(table, "models", where, required=True)
        unknown = [m for m in models if m not in known_models]
        if unknown:
            raise CatalogError(f"{where}: unknown model id(s) {', '.join(unknown)}")
        if len(set(models)) != len(models):
            raise CatalogError(f"{where}: a model is listed twice")

        lang = _str(table, "lang", where)
        if lang not in LANGUAGES:
            raise CatalogError(f"{where}: lang must be one of {', '.join(LANGUAGES)}, got {lang!r}")

        engine = _str(table, "engine", where)
        if engine not in ENGINES:
            raise CatalogError(f"{where}: engine must be 'vits' or 'espeak', got {engine!r}")
        weights = table.get("weights")
        if engine == "vits":
            if not isinstance(weights, str) or not weights.strip() or weights == "package:":
                raise CatalogError(
                    f"{where}: a vits voice needs weights (package:<module>, s3://<key> or a path)"
                )
        elif weights is not None:
            raise CatalogError(f"{where}: an espeak voice takes no weights")
        quality = _str(table, "quality", where, default="neural" if engine == "vits" else "formant")
        if quality not in QUALITIES:
            raise CatalogError(f"{where}: quality must be 'neural' or 'formant', got {quality!r}")

        return cls(
            speaker=speaker,
            models=models,
            lang=lang,
            gender=_str(table, "gender", where),
            age=_str(table, "age", where, default=""),
            country=_str(table, "country", where, default=""),
            dialect=_str(table, "dialect", where, default=""),
            demographic=_str(table, "demographic", where, default=""),
            genre=_strings(table, "genre", where, required=False),
            flagship=_bool(table, "flagship", where, False),
            engine=engine,  # type: ignore[arg-type]
            quality=quality,
            espeak_voice=_str(table, "espeak_voice", where, default=espeak_voice(lang)),
            weights=weights,
        )
