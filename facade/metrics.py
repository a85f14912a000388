"""Prometheus metrics of the API process, and ``GET /metrics``.

Counted where they happen: requests by route template and status (an ASGI middleware, so
streamed bodies are not buffered), open WebSockets (the same middleware sees the accept and the
end), time to first byte (``observe_first_byte``, called when the first audio bytes are ready),
characters billed (``facade.billing_metric``: streams here, job chunks in the workers). Job states, stalled jobs, queue depth, job
durations and webhook attempts are read from PostgreSQL and the broker at scrape time
(``JobCollector``): every worker process writes them there already, so the numbers are the
whole deployment's and need no multiprocess registry or pushgateway for the Celery workers.
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from facade.deps import ServicesDep
from scheduler.queue_depth import QueueDepths

log = logging.getLogger("lector.metrics")

HTTP_REQUESTS = Counter("lector_http_requests_total", "HTTP requests answered", ["route", "status"])
TIME_TO_FIRST_BYTE = Histogram(
    "lector_time_to_first_byte_seconds", "From the request's arrival to its first audio bytes", ["transport", "format"],
    buckets=(0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2.5, 5, 10),
)
WEBSOCKETS = Gauge("lector_websocket_connections", "Open WebSocket connections")
JOB_DURATION_BUCKETS = (30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 1800.0, 3600.0, 7200.0, 14400.0)
# What JobCollector exposes (the series names, as dashboards and alert rules use them).
JOBS, JOBS_STALLED, QUEUE_DEPTH = "lector_jobs", "lector_jobs_stalled", "lector_queue_depth"
JOB_DURATION, WEBHOOK_ATTEMPTS = "lector_job_duration_seconds", "lector_webhook_attempts"
COLLECTED_SERIES = (JOBS, JOBS_STALLED, QUEUE_DEPTH, f"{JOB_DURATION}_bucket", f"{JOB_DURATION}_sum",
                    f"{JOB_DURATION}_count", f"{WEBHOOK_ATTEMPTS}_total")

_request_started: contextvars.ContextVar[float | None] = contextvars.ContextVar("lector_request_started", default=None)


def observe_first_byte(transport: str, fmt: str, *, since: float | None = None) -> None:
    """Record a time to first byte, from the request's arrival (or ``since``, a perf_counter)."""
    started = since if since is not None else _request_started.get()
    if started is not None:
        TIME_TO_FIRST_BYTE.labels(transport, fmt).observe(time.perf_counter() - started)


class MetricsMiddleware:
    """Counts requests by route template (``/v1/jobs/{job_id}``, never the raw path: bounded
    labels) and keeps the WebSocket gauge."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        _request_started.set(time.perf_counter())
        status = 500

        async def counting_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            HTTP_REQUESTS.labels(_route(scope), str(status)).inc()

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        accepted = False

        async def watching_send(message: Message) -> None:
            nonlocal accepted
            if message["type"] == "websocket.accept" and not accepted:
                accepted = True
                WEBSOCKETS.inc()
            await send(message)

        try:
            await self.app(scope, receive, watching_send)
        finally:
            if accepted:
                WEBSOCKETS.dec()


def _route(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    return str(path) if path else "unmatched"


def metrics_response() -> Response:
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)


class JobCollector(Collector):
    """Job numbers read at scrape time from PostgreSQL, queue depths from the broker (Redis or
    RabbitMQ: ``scheduler.queue_depth``)."""

    def __init__(
        self, sessions: Callable[[], Any], depths: QueueDepths, queues: Iterable[str], stall_after_s: float,
    ) -> None:
        self._sessions = sessions
        self._depths = depths
        self._queues = tuple(queues)
        self._stall_after_s = stall_after_s

    def describe(self) -> Iterable[Any]:
        return []  # collected on demand: registering must not query PostgreSQL

    def collect(self) -> Iterator[Any]:
        from store.db import metrics as job_metrics

        try:
            with self._sessions() as session:
                states = job_metrics.jobs_by_status(session=session)
                stalled = job_metrics.stalled_jobs(session=session, older_than_s=self._stall_after_s)
                durations, total, count = job_metrics.job_durations(session=session, buckets=JOB_DURATION_BUCKETS)
                attempts = job_metrics.webhook_attempts(session=session)
        except Exception as exc:  # noqa: BLE001 - a scrape must not fail because PostgreSQL did
            log.warning("job metrics unavailable: %s", exc)
        else:
            jobs = GaugeMetricFamily(JOBS, "Jobs by state", labels=["state"])
            for state, number in sorted(states.items()):
                jobs.add_metric([state], number)
            yield jobs
            yield GaugeMetricFamily(JOBS_STALLED, "Running jobs unchanged for longer than the reaper waits",
                                    value=stalled)
            histogram = HistogramMetricFamily(JOB_DURATION, "From submission to success or failure")
            histogram.add_metric([], [(str(le), n) for le, n in durations] + [("+Inf", count)], total)
            yield histogram
            webhooks = CounterMetricFamily(WEBHOOK_ATTEMPTS, "Webhook delivery attempts", labels=["outcome"])
            for outcome, number in sorted(attempts.items()):
                webhooks.add_metric([outcome], number)
            yield webhooks
        depth = GaugeMetricFamily(QUEUE_DEPTH, "Tasks waiting in each Celery queue", labels=["queue"])
        try:
            for queue, number in self._depths.depths(self._queues).items():
                depth.add_metric([queue], number)
        except Exception as exc:  # noqa: BLE001
            log.warning("queue depth unavailable: %s", exc)
        else:
            yield depth


async def metrics_endpoint(services: ServicesDep) -> Response:
    """``GET /metrics``: Prometheus text format. Unauthenticated, like every scrape target:
    keep it off the public ingress (infra/ routes only the API paths outward)."""
    return await services.offload(metrics_response)  # the job collector queries PostgreSQL


def register_job_collector(services: Any) -> JobCollector | None:
    """The scrape-time job collector, for a process that has PostgreSQL and a broker (cloud mode)."""
    if services.storage.session_factory is None or services.brokers.queue_depths is None:
        return None
    from scheduler.queue import QUEUES

    collector = JobCollector(services.storage.session_factory, services.brokers.queue_depths, QUEUES, services.jobs.stall_after_s)
    REGISTRY.register(collector)
    return collector


def unregister(collector: Collector | None) -> None:
    if collector is not None:
        REGISTRY.unregister(collector)
