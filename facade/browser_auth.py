"""API keys from browsers on WebSockets, which cannot send an ``Authorization`` header.

A browser's ``WebSocket`` sets no headers, and a key in the query string would land in access
logs. So the console offers two subprotocols: the marker ``lector`` and ``lector.key.<key>``,
the key base64url-encoded (no padding) so that any typed string is a valid protocol token. The
server answers with the marker only (the key never comes back in a header).

A browser also cannot read the body of a refused upgrade; for these clients a refusal is sent
after the handshake instead, as a close frame with code ``4000 + status`` and the reason
``<status>: <message>`` (the vendor API contract's message), the same shape as the 1011 closes after opening.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final

MARKER: Final = "lector"
KEY_PROTOCOL_PREFIX: Final = "lector.key."
CLOSE_CODE_BASE: Final = 4000


def offered_protocols(headers: Any) -> list[str]:
    """The subprotocols the client offered, in order."""
    raw = headers.get("sec-websocket-protocol") or ""
    return [p.strip() for p in raw.split(",") if p.strip()]


def key_from_protocols(protocols: list[str]) -> str | None:
    """The key carried in the subprotocols, ``""`` for an undecodable one, ``None`` when the
    client did not use this scheme (then the ``Authorization`` header rules)."""
    if MARKER not in protocols:
        return None
    for protocol in protocols:
        if protocol.startswith(KEY_PROTOCOL_PREFIX):
            encoded = protocol[len(KEY_PROTOCOL_PREFIX):]
            try:
                return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode("utf-8").strip()
            except (binascii.Error, UnicodeDecodeError, ValueError):
                return ""
    return ""


def close_code(status: int) -> int:
    """The close code a refusal with HTTP ``status`` is sent with (4401, 4403, 4429...)."""
    return CLOSE_CODE_BASE + status
