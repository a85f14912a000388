"""WebSocket connection rate per account: ``ws_connections_per_minute`` upgrades per rolling minute.

Counted in Redis when the service has one, so every API process shares the count (the vendor API contract:
limits count per account, team members share them); in-process otherwise (single process,
self-hosted). A sliding window of two fixed minutes weighted by overlap keeps bursts at a
minute boundary from doubling the allowance.
"""

from __future__ import annotations

import threading
import time

from facade.deps import Principal, Services

# In-process counts, by minute then account. Only the current and the previous minute are ever
# read, so older minutes are dropped as the clock moves on: the table holds at most two minutes
# of accounts, however long the process runs.
_local: dict[int, dict[str, int]] = {}
_local_lock = threading.Lock()


def _count_locally(account: str, minute: int) -> tuple[int, int]:
    """Count one connection of ``account`` in ``minute``; its counts this minute and the last."""
    with _local_lock:
        for old in [m for m in _local if m < minute - 1]:
            del _local[old]
        current = _local.setdefault(minute, {})
        current[account] = current.get(account, 0) + 1
        return current[account], _local.get(minute - 1, {}).get(account, 0)


def _allow_sync(services: Services, principal: Principal, now: float) -> bool:
    limit = principal.ws_connections_per_minute
    if limit <= 0:
        return False
    minute = int(now // 60)
    weight = 1.0 - (now % 60) / 60.0
    account = str(principal.account_id or principal.account_name)
    current_key = f"lector:wsrate:{account}:{minute}"
    previous_key = f"lector:wsrate:{account}:{minute - 1}"
    if services.brokers.redis is not None:
        pipe = services.brokers.redis.pipeline()
        pipe.incr(current_key)
        pipe.expire(current_key, 130)
        pipe.get(previous_key)
        current, _, previous = pipe.execute()
        previous = int(previous or 0)
    else:
        current, previous = _count_locally(account, minute)
    return bool(current + previous * weight <= limit)


async def allow_connection(services: Services, principal: Principal, *, now: float | None = None) -> bool:
    return await services.offload(_allow_sync, services, principal, now if now is not None else time.time())
