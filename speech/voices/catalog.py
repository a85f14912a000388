"""The voice catalog: model ids -> voices -> engine + weights.

``Catalog.load()`` reads ``catalog.toml`` beside this module (or a file the operator names) and
validates it whole, raising ``CatalogError`` that names the bad entry. After that the catalog
is immutable and answers the questions every transport asks:

- ``resolve_model(model_id, now=..., self_hosted=...)``: which model serves a request. An
  absent ``modelId`` means the default (``mistv3``); in cloud mode ``arcana`` is served by
  ``coda`` from 2026-08-15 12:00 UTC. The clock is injected so the switch is testable.
- ``resolve(model_id, speaker, lang)``: the ``Voice`` to synthesize with, or ``ModelNotFound``,
  ``LanguageNotSupported`` (the vendor API contract's message, with ``lang`` as the client sent it) or
  ``VoiceNotFound``. A speaker whose own language differs from ``lang`` is still returned: the
  vendor API contract says such pairings are not always validated, and the voice speaks its own language.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Final, Protocol

from speech.errors import CatalogError, LanguageNotSupported, ModelNotFound, VoiceNotFound
from speech.text.languages import SUPPORTED, canonical
from speech.voices.entries import Model, Voice

DEFAULT_MODEL: Final = "mistv3"
_TOP_KEYS: Final = frozenset({"default_model", "models", "voices"})


def default_catalog_path() -> Path:
    """``catalog.toml`` shipped inside the ``speech.voices`` package."""
    return Path(str(resources.files("speech.voices").joinpath("catalog.toml")))


class VoiceCatalog(Protocol):
    """What a book's synthesis step asks of the catalog (``scheduler.synthesis``): the voice a
    job names. ``Catalog`` is one; the API's routes use the rest of ``Catalog`` directly."""

    def resolve(self, model_id: str | None, speaker: str, lang: str | None = "en") -> Voice: ...


@dataclass(frozen=True, slots=True)
class Catalog:
    models: Mapping[str, Model]
    voices: tuple[Voice, ...]
    default_model: str = DEFAULT_MODEL

    # -- loading --------------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path | None = None) -> Catalog:
        """Read and validate a catalog file (the shipped one when ``path`` is ``None``)."""
        file = Path(path) if path is not None else default_catalog_path()
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except OSError as exc:
            raise CatalogError(f"{file}: cannot be read ({exc.strerror or exc})") from exc
        except tomllib.TOMLDecodeError as exc:
            raise CatalogError(f"{file}: not valid TOML ({exc})") from exc
        return cls.from_dict(data, source=str(file))

    @classmethod
    def from_dict(cls, data: Mapping[str, object], *, source: str = "catalog") -> Catalog:
        try:
            return cls._from_dict(data)
        except CatalogError as exc:
            raise CatalogError(f"{source}: {exc}") from None

    @classmethod
    def _from_dict(cls, data: Mapping[str, object]) -> Catalog:
        unknown = sorted(set(data) - _TOP_KEYS)
        if unknown:
            raise CatalogError(f"unknown top-level key(s) {', '.join(unknown)}")
        tables = data.get("models")
        if not isinstance(tables, Mapping) or not tables:
            raise CatalogError("models: at least one [models.<id>] table is required")
        models = {model_id: Model.from_dict(model_id, table) for model_id, table in tables.items()}
        for model in models.values():
            if model.served_by is not None and model.served_by not in models:
                raise CatalogError(f"models.{model.id}: served_by names unknown model {model.served_by!r}")
            if model.served_by == model.id:
                raise CatalogError(f"models.{model.id}: a model cannot be served by itself")

        default = data.get("default_model", DEFAULT_MODEL)
        if not isinstance(default, str) or default not in models:
            raise CatalogError(f"default_model {default!r} is not one of the models")

        entries = data.get("voices")
        if not isinstance(entries, list) or not entries:
            raise CatalogError("voices: at least one [[voices]] entry is required")
        known = frozenset(models)
        voices = tuple(Voice.from_dict(entry, i, known) for i, entry in enumerate(entries))
        seen: dict[tuple[str, str], int] = {}
        for i, voice in enumerate(voices):
            for model_id in voice.models:
                if (model_id, voice.speaker) in seen:
                    raise CatalogError(
                        f"voices[{i}] (speaker {voice.speaker!r}): duplicates voices[{seen[model_id, voice.speaker]}]"
                        f" in model {model_id}"
                    )
                seen[model_id, voice.speaker] = i
        return cls(models=MappingProxyType(models), voices=voices, default_model=default)

    # -- questions ------------------------------------------------------------------------

    def model(self, model_id: str | None) -> Model:
        """The model for ``model_id`` (the default when ``None`` or empty)."""
        key = model_id or self.default_model
        try:
            return self.models[key]
        except KeyError:
            raise ModelNotFound(key) from None

    def resolve_model(self, model_id: str | None, *, now: datetime, self_hosted: bool = False) -> str:
        """The id of the model that serves a request for ``model_id`` at ``now``.

        A naive ``now`` is taken as UTC. Self-hosted deployments run the images they have, so
        no switch applies there.
        """
        model = self.model(model_id)
        if self_hosted or model.served_by is None or model.switch_at is None:
            return model.id
        instant = now if now.tzinfo is not None else now.replace(tzinfo=UTC)
        return model.served_by if instant >= model.switch_at else model.id

    def languages(self, model_id: str | None) -> tuple[str, ...]:
        """The 2-letter languages ``model_id`` speaks (those of its voices), in the vendor API contract's order."""
        model = self.model(model_id)
        spoken = {v.lang for v in self.voices if model.id in v.models}
        return tuple(code for code in SUPPORTED if code in spoken)

    def voices_of(self, model_id: str | None, lang: str | None = None) -> list[Voice]:
        """The lineup of ``model_id`` in catalog order, optionally only one language's voices."""
        model = self.model(model_id)
        code = canonical(lang) if lang is not None else None
        return [v for v in self.voices if model.id in v.models and (code is None or v.lang == code)]

    def voice(self, model_id: str | None, speaker: str) -> Voice:
        model = self.model(model_id)
        for v in self.voices:
            if v.speaker == speaker and model.id in v.models:
                return v
        raise VoiceNotFound(speaker, model.id)

    def resolve(
        self,
        model_id: str | None,
        speaker: str,
        lang: str | None = "en",
        *,
        now: datetime | None = None,
        self_hosted: bool = False,
    ) -> Voice:
        """The voice for a request, checked in the vendor API contract's order: model, language, speaker.

        ``lang`` ``None`` means the vendor API contract's default ``en``. With ``now`` the model is first
        resolved through ``resolve_model``; errors still name the model the client asked for.
        """
        requested = self.model(model_id).id
        served = (
            self.resolve_model(requested, now=now, self_hosted=self_hosted) if now is not None else requested
        )
        sent = "en" if lang is None else lang
        code = canonical(sent)
        if code is None or code not in self.languages(served):
            raise LanguageNotSupported(sent, requested)
        try:
            return self.voice(served, speaker)
        except VoiceNotFound:
            raise VoiceNotFound(speaker, requested) from None
