from __future__ import annotations

import pytest

from scheduler.errors import InvalidWebhookUrl
from scheduler.webhooks import (
    backoff_seconds,
    check_url,
    delay_cap,
    sign,
    verify,
)


def test_signature_round_trip_and_tamper() -> None:
    header = sign("s3cret", b'{"a":1}', timestamp=1_700_000_000)
    assert verify("s3cret", b'{"a":1}', header, now=1_700_000_010)
    assert not verify("s3cret", b'{"a":2}', header, now=1_700_000_010)
    assert not verify("other", b'{"a":1}', header, now=1_700_000_010)


def test_old_signatures_are_refused() -> None:
    header = sign("s3cret", b"x", timestamp=1_700_000_000)
    assert not verify("s3cret", b"x", header, now=1_700_000_000 + 301)
    assert not verify("s3cret", b"x", "garbage")


def test_backoff_doubles_from_five_seconds_to_the_cap() -> None:
    assert [backoff_seconds(a) for a in (1, 2, 3, 4)] == [5, 10, 20, 40]
    assert backoff_seconds(100) == 3600
    assert backoff_seconds(100, cap_s=900) == 900


@pytest.mark.parametrize("visibility_timeout_s", [30, 1800, 3600, 7200, 86400])
def test_retry_waits_stay_under_the_visibility_timeout(visibility_timeout_s: int) -> None:
    """A countdown longer than the Redis visibility timeout is handed out twice: never wait that long."""
    cap = delay_cap(visibility_timeout_s)
    assert max(backoff_seconds(a, cap_s=cap) for a in range(1, 200)) < visibility_timeout_s
    assert cap <= 3600


@pytest.mark.parametrize("url", ["ftp://example.com/x", "file:///etc/passwd", "http://127.0.0.1/x", "http://10.0.0.8/hook",
                                 "http://[::1]/x", "http://169.254.169.254/latest", "javascript:alert(1)"])
def test_refused_targets(url: str) -> None:
    with pytest.raises(InvalidWebhookUrl):
        check_url(url, allow_private=False)


def test_loopback_allowed_when_configured() -> None:
    check_url("http://127.0.0.1:9/hook", allow_private=True)
    with pytest.raises(InvalidWebhookUrl):
        check_url("gopher://127.0.0.1/", allow_private=True)
