"""Billing a streamed synthesis once it ends.

What a billed character is lives in ``speech.billing`` (one rule for every transport and for
jobs). A stream cut short bills the share of its sentences that were synthesized; a request that
produced no audio bills nothing. Self-hosted mode has no database and skips this.

When PostgreSQL cannot take the row (it went away after the request was authenticated), the
row goes to the outbox: a ``UsageSpool`` on local disk, fsynced before ``record`` returns, that
a background thread replays into PostgreSQL (``replay_into``) once it answers again. A replay
that crashed half-way is sent again, and rows already in are recognised by request id and time.

Only "database unavailable" waits in the outbox. A row PostgreSQL refuses for another reason
would be refused again on every replay, so it goes to the outbox's dead letters
(``DeadLetters``) with a log line, and the rows behind it are replayed.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Callable, Generator
from datetime import UTC, datetime
from typing import Any

from facade.billing_metric import CHARACTERS_BILLED
from facade.deps import Principal, Services
from facade.request_resolution import ResolvedRequest
from facade.usage_spool import DeadLetters
from facade.validation import SynthesisRequest
from speech.billing import billed_characters
from speech.streaming import StreamStats
from store.errors import DatabaseUnavailable

log = logging.getLogger("lector.usage")


def close_quietly(stream: Generator[Any, Any, Any]) -> None:
    """Close a synthesis generator; when a cancelled request left it running in a worker thread,
    closing raises ``ValueError`` and the thread's current sentence simply finishes on its own."""
    with contextlib.suppress(ValueError):
        stream.close()


def billed_share(text: str, done: int, total: int, *, continues: bool = False) -> int:
    """The text's billed characters (``speech.billing``), or the share of them that ``done`` of
    ``total`` sentences make when the stream was cut short (at least one: audio went out).
    ``continues``: a later run of a WebSocket's text, which carries the break before it."""
    if total <= 0 or done <= 0:
        return 0
    characters = billed_characters(text, continues=continues)
    if done >= total:
        return characters
    return max(1, round(characters * done / total))


def record(
    services: Services,
    principal: Principal,
    req: SynthesisRequest,
    resolved: ResolvedRequest,
    stats: StreamStats,
    *,
    transport: str,
    request_id: str,
    continues: bool = False,
) -> None:
    text = resolved.billed_text if resolved.billed_text is not None else req.text
    characters = billed_share(text, stats.begun, len(resolved.units), continues=continues)
    if characters:
        CHARACTERS_BILLED.labels(resolved.requested_model, transport).inc(characters)
    if characters and services.usage.sink is not None:
        try:
            services.usage.sink({"characters": characters, "model": resolved.requested_model, "speaker": req.speaker,
                                 "lang": resolved.lang, "transport": transport, "requestId": request_id,
                                 "audioSeconds": round(stats.audio_seconds, 3)})
        except Exception:  # the audio is delivered; losing the count must be loud, not fatal
            log.exception("could not spool usage for request %s", request_id)
    if characters == 0 or services.storage.session_factory is None or principal.account_id is None:
        return
    row = {
        "accountId": str(principal.account_id),
        "apiKeyId": str(principal.api_key_id) if principal.api_key_id else None,
        "transport": transport, "requestId": request_id, "model": resolved.requested_model, "speaker": req.speaker,
        "lang": resolved.lang, "characters": characters, "audioSeconds": round(stats.audio_seconds, 3),
        "createdAt": datetime.now(UTC).isoformat(),
    }
    try:
        with services.storage.session_factory() as session:
            _insert(session, row)
    except DatabaseUnavailable:
        if services.usage.outbox is None:  # the audio is delivered; losing the row must be loud
            log.exception("could not record usage for request %s", request_id)
            return
        log.warning("database unavailable: usage of request %s kept in the outbox", request_id)
        services.usage.outbox.append(row)
    except Exception as exc:  # noqa: BLE001 - a refused row: kept aside, never retried in a loop
        dead = services.usage.outbox.dead_letters if services.usage.outbox is not None else None
        if dead is None:
            log.exception("could not record usage for request %s", request_id)
            return
        dead.add(row, f"{type(exc).__name__}: {exc}")


def _insert(session: Any, row: dict[str, Any]) -> bool:
    from store.db import usage as usage_repo

    account_id = uuid.UUID(row["accountId"])
    created_at = datetime.fromisoformat(row["createdAt"])
    if usage_repo.request_billed(session=session, request_id=row["requestId"], account_id=account_id, at=created_at):
        return False
    return usage_repo.record_usage(
        session=session, account_id=account_id,
        api_key_id=uuid.UUID(row["apiKeyId"]) if row.get("apiKeyId") else None,
        transport=row["transport"], request_id=row["requestId"], model=row["model"], speaker=row["speaker"],
        lang=row.get("lang"), characters=int(row["characters"]), audio_seconds=float(row["audioSeconds"]),
        created_at=created_at,
    )


def replay_into(
    session_factory: Callable[[], Any], dead_letters: DeadLetters | None = None
) -> Callable[[dict[str, Any]], bool]:
    """The outbox's sender: spooled rows into PostgreSQL, one transaction each, so that a row
    PostgreSQL refuses (it goes to ``dead_letters``) holds up none behind it. While the database
    is away the batch stays spooled (rows already in are recognised on the next replay)."""

    def send(body: dict[str, Any]) -> bool:
        for row in body["records"]:
            try:
                with session_factory() as session:
                    _insert(session, row)
            except DatabaseUnavailable as exc:
                log.warning("usage outbox replay waits: %s", exc)
                return False
            except Exception as exc:  # noqa: BLE001 - a poison row: set aside, go on
                if dead_letters is None:
                    log.exception("usage outbox row %s refused; kept in the outbox", row.get("requestId"))
                    return False
                dead_letters.add(row, f"{type(exc).__name__}: {exc}")
        return True

    return send
