"""Signed webhook callbacks.

The signature header is ``Lector-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>`` over
``"<t>." + body`` with the account's secret, the scheme Stripe made familiar: the timestamp inside
the MAC lets receivers refuse replays, and ``v1`` leaves room to rotate algorithms.

Targets are checked twice, at submission and at delivery (DNS can change in between): only
http(s), and no private, loopback or link-local address unless configuration allows it.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from scheduler.errors import InvalidWebhookUrl

SIGNATURE_HEADER = "Lector-Signature"
RETRY_WINDOW_S = 24 * 3600  # attempts go on for a day after the job finished
MAX_DELAY_S = 3600


def delay_cap(visibility_timeout_s: float) -> float:
    """The longest wait between attempts that the queue can hold safely.

    A retry is a Celery task with a countdown, and the Redis transport keeps such a task unacked
    in the worker until it is due: past the visibility timeout Redis hands it out again, and
    every hand-out would become a chain of callbacks of its own. So the wait stays under half
    the visibility timeout (and one hour at most)."""
    return float(max(5.0, min(MAX_DELAY_S, visibility_timeout_s / 2)))


def backoff_seconds(attempt: int, *, cap_s: float = MAX_DELAY_S) -> float:
    """Delay before attempt ``attempt + 1``: 5 s doubling, capped at ``cap_s``."""
    return float(min(5 * 2 ** min(max(attempt - 1, 0), 30), cap_s))


def sign(secret: str, body: bytes, *, timestamp: int | None = None) -> str:
    ts = int(time.time()) if timestamp is None else timestamp
    mac = hmac.new(secret.encode(), f"{ts}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={ts},v1={mac}"


def verify(secret: str, body: bytes, header: str, *, tolerance_s: int = 300, now: float | None = None) -> bool:
    """What a receiver does; used by our tests and offered to customers as reference code."""
    try:
        parts = dict(item.split("=", 1) for item in header.split(","))
        ts = int(parts["t"])
    except (ValueError, KeyError):
        return False
    if abs((now or time.time()) - ts) > tolerance_s:
        return False
    expected = sign(secret, body, timestamp=ts).split("v1=", 1)[1]
    return hmac.compare_digest(expected, parts.get("v1", ""))


def check_url(url: str, *, allow_private: bool) -> None:
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise InvalidWebhookUrl("webhookUrl must be an http or https URL")
    if allow_private:
        return
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 443, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise InvalidWebhookUrl(f"webhookUrl host {parts.hostname} does not resolve") from exc
    for info in infos:
        addr = ipaddress.ip_address(info[4][0])
        if addr.is_private or addr.is_loopback or addr.is_link_local or addr.is_reserved or addr.is_multicast:
            raise InvalidWebhookUrl("webhookUrl must not point to a private or loopback address")


@dataclass(frozen=True, slots=True)
class Attempt:
    status_code: int | None
    error: str | None

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def post(url: str, payload: Mapping[str, object], *, secret: str, timeout_s: float) -> Attempt:
    body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
    headers = {
        "Content-Type": "application/json",
        SIGNATURE_HEADER: sign(secret, body),
        "User-Agent": "lector-webhooks/1",
    }
    try:
        response = httpx.post(url, content=body, headers=headers, timeout=timeout_s, follow_redirects=False)
    except httpx.HTTPError as exc:
        return Attempt(None, f"{type(exc).__name__}: {exc}")
    return Attempt(response.status_code, None if response.is_success else f"HTTP {response.status_code}")
