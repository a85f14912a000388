"""facade/ratelimit.py: WebSocket upgrades per account and rolling minute, counted in real Redis
(shared by every API process) and in process when there is none."""

from __future__ import annotations

import uuid

import pytest
import redis

from facade.deps import Brokers, Principal, Services, Speech
from facade.ratelimit import allow_connection

MINUTE_START = 1_800_000_000.0 - 1_800_000_000.0 % 60  # a minute boundary


def _principal(limit: int) -> Principal:
    return Principal(account_id=uuid.uuid4(), api_key_id=None, account_name="rate", allowed_models=None,
                     allowed_endpoints=None, ws_connections_per_minute=limit, webhook_secret="s")


def _services(client: redis.Redis | None) -> Services:
    return Services(speech=Speech(catalog=None, synthesizer=None), brokers=Brokers(redis=client))  # type: ignore[arg-type]


@pytest.mark.parametrize("shared", [True, False], ids=["redis", "in-process"])
async def test_the_limit_holds_per_account_and_rolls_over(shared: bool, redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url) if shared else None
    services, other_process = _services(client), _services(redis.Redis.from_url(redis_url) if shared else None)
    caller, neighbour = _principal(3), _principal(3)
    now = MINUTE_START + 1
    assert [await allow_connection(services, caller, now=now) for _ in range(3)] == [True, True, True]
    # The fourth is refused; in Redis, another API process sees the same count.
    assert not await allow_connection(other_process if shared else services, caller, now=now)
    assert await allow_connection(services, neighbour, now=now)  # another account has its own
    # Early next minute the last minute still weighs almost fully; a minute later it is gone.
    assert not await allow_connection(services, caller, now=now + 60)
    assert await allow_connection(services, caller, now=now + 125)
    if client is not None:
        client.close()


async def test_a_limit_of_zero_refuses_every_upgrade() -> None:
    assert not await allow_connection(_services(None), _principal(0), now=MINUTE_START)
