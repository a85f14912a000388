"""The console's WebSocket key scheme (facade/browser_auth.py): the key rides in a subprotocol,
base64url-encoded, next to the ``lector`` marker; without the marker the header rules."""

from __future__ import annotations

import base64

import pytest

from facade.browser_auth import close_code, key_from_protocols, offered_protocols


def _encoded(key: str) -> str:
    return "lector.key." + base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")


@pytest.mark.parametrize("key", ["lk_" + "A-b_9" * 8, "lk_x", "spaces and ü"])
def test_a_key_round_trips_through_the_subprotocol(key: str) -> None:
    assert key_from_protocols(["lector", _encoded(key)]) == key.strip()


def test_without_the_marker_the_header_rules() -> None:
    assert key_from_protocols([_encoded("lk_abc")]) is None
    assert key_from_protocols([]) is None


def test_a_marker_without_a_decodable_key_is_an_empty_key() -> None:
    assert key_from_protocols(["lector"]) == ""
    assert key_from_protocols(["lector", "lector.key.%%%"]) == ""


def test_offered_protocols_and_close_codes() -> None:
    assert offered_protocols({"sec-websocket-protocol": "lector, lector.key.abc"}) == ["lector", "lector.key.abc"]
    assert offered_protocols({}) == []
    assert (close_code(401), close_code(429)) == (4401, 4429)
