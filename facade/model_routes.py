"""Which model service answers a request: ``MODEL_URL``, or a per-language one for ``arcana``.

The vendor API contract's self-hosted table: ``ARCANA_ENG_MODEL_URL``, ``ARCANA_SPA_MODEL_URL``,
``ARCANA_FRA_MODEL_URL`` and ``ARCANA_GER_MODEL_URL`` each point at the container for that
language, ``MODEL_URL`` still points at a default container, and the API routes by the request's
``lang``. Any accepted spelling of the language routes the same way (``de``, ``ger``, ``deu``,
``de-DE``), because the language is reduced to its 2-letter form first. An ``arcana`` request in
a language with no container of its own, and every other model, goes to ``MODEL_URL``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from facade.remote_engine import ModelUnavailable, RemoteVoice
from speech.synthesizer import Controls
from speech.text.languages import canonical

ARCANA: Final = "arcana"


@dataclass(frozen=True, slots=True)
class ModelRoutes:
    default: str | None
    arcana: Mapping[str, str] = field(default_factory=dict)  # 2-letter language -> /invocations URL

    @classmethod
    def build(
        cls, model_url: str | None, *, eng: str | None = None, spa: str | None = None,
        fra: str | None = None, ger: str | None = None,
    ) -> ModelRoutes:
        pairs = {"en": eng, "es": spa, "fr": fra, "de": ger}
        return cls(model_url or None, {lang: url for lang, url in pairs.items() if url})

    def url_for(self, model_id: str | None, lang: str | None) -> str:
        if model_id == ARCANA and lang:
            code = canonical(lang)
            if code is not None and code in self.arcana:
                return self.arcana[code]
        if self.default is None:
            raise ModelUnavailable("no model service is configured (MODEL_URL is not set)")
        return self.default

    def route(self, voice: RemoteVoice, controls: Controls) -> str:
        """For ``RemoteSynthesizer``: the voice's language is the request's (the catalog refuses
        a ``lang`` the speaker does not speak), and ``controls.route`` the serving model
        (``facade.vendor_controls.controls_for``)."""
        return self.url_for(controls.route, voice.lang)

    def urls(self) -> list[str]:
        """Every configured model service, each once (for ``/health``)."""
        seen: list[str] = []
        for url in (self.default, *self.arcana.values()):
            if url and url not in seen:
                seen.append(url)
        return seen
