"""How many tasks wait on each of lector's queues, asked of the broker that holds them.

Why here: the queue-depth gauge (``facade.metrics``) and whatever scales the workers must count
the queues where the tasks are. With Redis as the broker a queue is a list (``LLEN``); with
RabbitMQ it is a queue on the broker, and Redis knows nothing of it (the gauge used to read Redis
on a RabbitMQ farm and said 0 while the ``synth`` queue held thousands). Both count the tasks
*waiting*: Redis keeps delivered, unacknowledged tasks in a hash of their own, and AMQP's passive
declare reports the ready messages only (KEDA's ``rabbitmq`` trigger over the management API adds
the unacknowledged ones: ``docs/scaling.md``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from scheduler.queue import is_amqp

CONNECT_TIMEOUT_S = 2.0


class QueueDepths(Protocol):
    """The tasks waiting on each of ``queues``; raises when the broker cannot be asked."""

    def depths(self, queues: Iterable[str]) -> dict[str, int]: ...


class RedisDepths:
    """Kombu's Redis transport keeps a queue as a list named after it."""

    def __init__(self, broker_url: str) -> None:
        import redis

        self._client = redis.Redis.from_url(broker_url, socket_timeout=CONNECT_TIMEOUT_S,
                                            socket_connect_timeout=CONNECT_TIMEOUT_S)

    def depths(self, queues: Iterable[str]) -> dict[str, int]:
        return {queue: int(self._client.llen(queue)) for queue in queues}

    def close(self) -> None:
        self._client.close()


class AmqpDepths:
    """A passive declare per queue (it creates nothing; a queue not declared yet counts 0), on a
    connection opened per scrape: scrapes are seconds apart, and a held connection would be one
    more thing to keep alive through a broker's restart."""

    def __init__(self, broker_url: str) -> None:
        self._url = broker_url

    def depths(self, queues: Iterable[str]) -> dict[str, int]:
        from amqp.exceptions import NotFound
        from kombu.connection import Connection

        found: dict[str, int] = {}
        with Connection(self._url, connect_timeout=CONNECT_TIMEOUT_S) as connection:  # type: ignore[no-untyped-call]
            for queue in queues:
                channel = connection.channel()  # a 404 closes the channel: one per queue
                try:
                    _, count, _ = channel.queue_declare(queue=queue, passive=True)
                    found[queue] = int(count)
                except NotFound:
                    found[queue] = 0
                finally:
                    if channel.is_open:
                        channel.close()
        return found

    def close(self) -> None:
        """Nothing held between scrapes."""


def queue_depths(broker_url: str) -> RedisDepths | AmqpDepths:
    """The counter for the broker ``broker_url`` names."""
    return AmqpDepths(broker_url) if is_amqp(broker_url) else RedisDepths(broker_url)
