"""Billing a streamed synthesis once it ends.

Characters are the request's own characters (what the customer sent, not our normalised
expansion). A stream cut short bills the share of sentences that were synthesized; a request
that produced no audio bills nothing. Self-hosted mode has no database and skips this.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Generator
from typing import Any

from facade.deps import Principal, Services
from facade.synthesis import Plan
from facade.validation import SynthesisRequest
from speech.streaming import StreamStats

log = logging.getLogger("lector.usage")


def close_quietly(stream: Generator[Any, Any, Any]) -> None:
    """Close a synthesis generator; when a cancelled request left it running in a worker thread,
    closing raises ``ValueError`` and the thread's current sentence simply finishes on its own."""
    with contextlib.suppress(ValueError):
        stream.close()


def billed_characters(text_chars: int, done: int, total: int) -> int:
    if total <= 0 or done <= 0:
        return 0
    if done >= total:
        return text_chars
    return max(1, round(text_chars * done / total))


def record(
    services: Services,
    principal: Principal,
    req: SynthesisRequest,
    plan: Plan,
    stats: StreamStats,
    *,
    transport: str,
    request_id: str,
) -> None:
    characters = billed_characters(len(req.text), stats.sentences, len(plan.units))
    if characters and services.usage_sink is not None:
        try:
            services.usage_sink({"characters": characters, "model": plan.requested_model, "speaker": req.speaker,
                                 "lang": plan.lang, "transport": transport, "requestId": request_id,
                                 "audioSeconds": round(stats.audio_seconds, 3)})
        except Exception:  # the audio is delivered; losing the count must be loud, not fatal
            log.exception("could not spool usage for request %s", request_id)
    if characters == 0 or services.session_factory is None or principal.account_id is None:
        return
    from store.db import usage as usage_repo

    try:
        with services.session_factory() as session:
            usage_repo.record_usage(
                session=session,
                account_id=principal.account_id,
                api_key_id=principal.api_key_id,
                transport=transport,
                request_id=request_id,
                model=plan.requested_model,
                speaker=req.speaker,
                lang=plan.lang,
                characters=characters,
                audio_seconds=round(stats.audio_seconds, 3),
            )
    except Exception:  # the audio is delivered; losing the row must be loud, not fatal
        log.exception("could not record usage for request %s", request_id)
