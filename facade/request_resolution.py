"""From a validated request to everything a synthesis needs (``ResolvedRequest``): model, voice,
format, rate, the stream steps and the lexicons. Nothing here synthesizes.

Shared by HTTP synthesis, the WebSockets and the self-hosted API, so each resolves a request the
same way and raises the same errors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import anyio

from facade import errors as e
from facade.deps import Principal, Services
from facade.validation import MAX_TEXT_CHARS, SynthesisRequest
from facade.vendor_controls import controls_for, steps_at_rate
from scheduler.lexicons import UsedLexicon, for_request
from speech.errors import PhonemesNotSupported
from speech.stream_steps import StreamStep, steps_for_request
from speech.synthesizer import Controls
from speech.voices import Voice

DEFAULT_MODEL = "mistv3"
DEFAULT_RATE = 24000
# mistv2's per-format defaults (vendor docs); other models default to 24000.
MISTV2_RATES = {"mp3": 22050, "pcm": 16000, "mulaw": 8000}
TELEPHONY_RATE = 8000


@dataclass(frozen=True, slots=True)
class ResolvedRequest:
    model_id: str  # the model that serves it (arcana -> coda after the switch)
    requested_model: str
    voice: Voice
    lang: str
    units: list[StreamStep]
    controls: Controls
    billed_text: str | None = None  # what is billed; None: the request's text (SSML: only what is spoken)
    lexicons: list[UsedLexicon] = field(default_factory=list)  # the lexicons applied, with their versions


def resolve(services: Services, req: SynthesisRequest, principal: Principal | None, *, endpoint: str) -> ResolvedRequest:
    requested = req.model_id or DEFAULT_MODEL
    now = services.now()
    catalog = services.speech.catalog
    model_id = catalog.resolve_model(requested, now=now, self_hosted=services.self_hosted)
    lang_tag = req.lang or "en"
    voice = catalog.resolve(model_id, req.speaker, lang_tag)
    if principal is not None and not principal.may_use(model=requested, endpoint=endpoint):
        raise e.ApiError(403, e.FORBIDDEN)
    lang = voice.lang
    lexicons = request_lexicons(services, req, principal)
    planned = steps_for_request(  # a TextError (bad markup, SSML, a lexicon) is the table's 400
        req.text, lang, ssml=req.ssml, lexicons=[used.lexicon for used in lexicons],
        normalize_text=not req.no_text_normalization,
        pause_between_brackets=req.pause_between_brackets,
        phonemize_between_brackets=req.phonemize_between_brackets,
        inline_speed_alpha=req.inline_speed_alpha,
    )
    if req.ssml and len(planned.billed_text) > MAX_TEXT_CHARS:
        raise e.ApiError(400, e.TEXT_TOO_LONG)
    units = voiced_units(services, planned.units, model_id, lang)
    if not any(unit.text or unit.phonemes for unit in units):  # only characters that normalise away
        raise e.ApiError(400, e.TEXT_EMPTY)
    for unit in units:
        speaker = unit.voice or voice
        if (unit.phonemes or (unit.lang and unit.lang != speaker.lang)) and not services.speech.synthesizer.speaks_phonemes(speaker):
            raise PhonemesNotSupported(unit.speaker or req.speaker)
    controls = controls_for(model_id, time_scale=req.time_scale, speed_alpha=req.speed_alpha)
    units = steps_at_rate(model_id, units)
    return ResolvedRequest(model_id, requested, voice, lang, units, controls, planned.billed_text, lexicons)


def request_lexicons(services: Services, req: SynthesisRequest, principal: Principal | None) -> list[UsedLexicon]:
    """The lexicons the request names, or its account's defaults. Deployments without accounts
    (self-hosted) have none to name."""
    account_id = principal.account_id if principal is not None else None
    if account_id is None or services.storage.session_factory is None:
        if req.lexicons:
            raise e.ApiError(400, "lexicons are not available on this deployment")
        return []
    with services.storage.session_factory() as session:
        return for_request(session=session, account_id=account_id, names=req.lexicons, limits=services.speech.lexicon_limits)


def voiced_units(services: Services, units: list[StreamStep], model_id: str, lang: str) -> list[StreamStep]:
    """SSML ``voice`` switches resolved through the catalog: another voice of the same model (an
    unknown one is the table's 400, as an unknown speaker is)."""
    resolved: dict[str, Any] = {}
    out = []
    for unit in units:
        if unit.speaker:
            if unit.speaker not in resolved:
                resolved[unit.speaker] = services.speech.catalog.resolve(model_id, unit.speaker, lang)
            unit = replace(unit, voice=resolved[unit.speaker])
        out.append(unit)
    return out


T = TypeVar("T")


async def in_engine_thread(services: Services, fn: Callable[..., T], *args: Any) -> T:
    """Run one synthesis step (a sentence: engine, resampling, encoding) on an engine thread, at
    most ``services.engine_slots`` at once. A CPU engine is mostly Python driving torch, so every
    extra thread is one more contender for the GIL: with 48 streams on 2 cores the event loop
    waited seconds for its turn, and even the voice list stalled. Steps wait for a thread on the
    event loop, holding none, and the pool's threads run at a lower CPU priority than the event
    loop (``facade.engine_pool``), so the API answers promptly while the streams share the cores.
    Like ``anyio.to_thread.run_sync``, a cancelled caller waits for its step to end (the step's
    results are billed by whoever called it). The pool is the app's (``ServingPools.open``);
    services used outside an app, or with no slots, run steps on anyio's pool."""
    if services.pools.engine is None:
        return await anyio.to_thread.run_sync(fn, *args)
    return await services.pools.engine.run(fn, *args)


def default_rate(model_id: str, fmt_name: str) -> int:
    if model_id == "mistv2" and fmt_name in MISTV2_RATES:
        return MISTV2_RATES[fmt_name]
    if fmt_name == "mulaw":
        return TELEPHONY_RATE
    return DEFAULT_RATE
