"""WebSocket connection rate per account: ``ws_connections_per_minute`` upgrades per rolling minute.

Counted in Redis when the service has one, so every API process shares the count (the seed:
limits count per account, team members share them); in-process otherwise (single process,
self-hosted). A sliding window of two fixed minutes weighted by overlap keeps bursts at a
minute boundary from doubling the allowance.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict

from starlette.concurrency import run_in_threadpool

from facade.deps import Principal, Services

_local: dict[str, int] = defaultdict(int)
_local_lock = threading.Lock()


def _allow_sync(services: Services, principal: Principal, now: float) -> bool:
    limit = principal.ws_connections_per_minute
    if limit <= 0:
        return False
    minute = int(now // 60)
    weight = 1.0 - (now % 60) / 60.0
    account = str(principal.account_id or principal.account_name)
    current_key = f"lector:wsrate:{account}:{minute}"
    previous_key = f"lector:wsrate:{account}:{minute - 1}"
    if services.redis is not None:
        pipe = services.redis.pipeline()
        pipe.incr(current_key)
        pipe.expire(current_key, 130)
        pipe.get(previous_key)
        current, _, previous = pipe.execute()
        previous = int(previous or 0)
    else:
        with _local_lock:
            _local[current_key] += 1
            current, previous = _local[current_key], _local.get(previous_key, 0)
    return current + previous * weight <= limit


async def allow_connection(services: Services, principal: Principal, *, now: float | None = None) -> bool:
    return await run_in_threadpool(_allow_sync, services, principal, now if now is not None else time.time())
