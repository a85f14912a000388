"""Self-hosted licences: a signed document the vendor issues, verified offline by the API service.

A licence is ``LECTOR1.<payload>.<signature>`` (both parts base64url, no padding): the payload is
JSON ``{"v": 1, "id", "customer", "issued", "expires", "models"}`` (ISO 8601 UTC instants;
``models`` a list of modelIds or null for all) and the signature is Ed25519 over the payload
bytes exactly as sent. One line, so it fits an environment variable as well as a file. The vendor
keeps the private key (``lector license keygen`` writes it locally); deployments get only the
public key (32 bytes, base64), which cannot issue licences.

Errors::

    LicenseError
    ├── LicenseMissing      no licence, or no public key to check it with
    ├── LicenseInvalid      malformed, or the signature does not verify
    └── LicenseExpired      past its ``expires`` instant

What a refusal looks like (``LicenseGate.require``): a missing, invalid, expired or revoked
licence answers **401 ``invalid subscription``**. The vendor API contract defines that message as "the key's
account has no valid subscription (returned as 401, not 402 or 403)", and a self-hosted licence
*is* the deployment's subscription; the vendor API contract's retry rules (do not retry 401) fit too, since only
an operator installing a valid licence fixes it. A model the licence does not cover is different:
the credential and the subscription are valid but may not use that resource, which is the vendor API contract's
**403 ``access forbidden``**; the gate expresses that through ``Principal.allowed_models``, so
``facade.request_resolution.resolve`` raises it like any other account restriction.

Online checks (``LECTOR_LICENSE_URL``) can only take a licence away, never grant one: the
signature is what makes a licence valid. When the endpoint is unreachable the last verdict stands
(an outage at the vendor must not stop a customer's service); an explicit "not valid" answer
(``{"valid": false}``, or 401/403/404/410) revokes until a later check says otherwise.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import httpx
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

log = logging.getLogger("lector.license")

PREFIX: Final = "LECTOR1"
VALID: Final = "valid"
NOT_VALID: Final = "expired-or-not-set"  # the vendor API contract's only other licenseStatus value
REVOKING_STATUSES: Final = frozenset({401, 403, 404, 410})


class LicenseError(Exception):
    """Root of the licence failures."""


class LicenseMissing(LicenseError):
    pass


class LicenseInvalid(LicenseError):
    pass


class LicenseExpired(LicenseError):
    pass



@dataclass(frozen=True, slots=True)
class License:
    id: str
    customer: str
    issued: datetime
    expires: datetime
    models: tuple[str, ...] | None  # None: every model

    def to_payload(self) -> dict[str, Any]:
        return {
            "v": 1, "id": self.id, "customer": self.customer, "issued": _iso(self.issued),
            "expires": _iso(self.expires), "models": list(self.models) if self.models is not None else None,
        }


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _instant(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# --- keys ----------------------------------------------------------------------------------------


def generate_keypair() -> tuple[bytes, str]:
    """A new vendor key pair: (private key as PKCS#8 PEM, public key as base64 of its 32 bytes)."""
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return pem, public_key_text(private.public_key())


def public_key_text(key: Ed25519PublicKey) -> str:
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode()


def load_private_key(pem: bytes) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise LicenseInvalid("the private key is not an Ed25519 key")
    return key


def load_public_key(text: str) -> Ed25519PublicKey:
    """Base64 of the raw 32 bytes, or a PEM ``PUBLIC KEY`` block."""
    text = text.strip()
    try:
        if text.startswith("-----BEGIN"):
            key = serialization.load_pem_public_key(text.encode())
            if not isinstance(key, Ed25519PublicKey):
                raise LicenseInvalid("the public key is not an Ed25519 key")
            return key
        return Ed25519PublicKey.from_public_bytes(base64.b64decode(text, validate=True))
    except (ValueError, binascii.Error) as exc:
        raise LicenseInvalid(f"the public key cannot be read: {exc}") from exc


# --- issue and verify ----------------------------------------------------------------------------


def issue(
    private_key: Ed25519PrivateKey,
    *,
    customer: str,
    expires: datetime,
    models: Sequence[str] | None = None,
    issued: datetime | None = None,
) -> str:
    """A signed licence token for ``customer`` until ``expires``."""
    lic = License(
        id=uuid.uuid4().hex, customer=customer, issued=issued or datetime.now(UTC),
        expires=expires, models=tuple(models) if models is not None else None,
    )
    payload = json.dumps(lic.to_payload(), separators=(",", ":"), sort_keys=True).encode()
    return f"{PREFIX}.{_b64(payload)}.{_b64(private_key.sign(payload))}"


def verify(token: str | None, public_key: Ed25519PublicKey | None, *, now: datetime | None = None) -> License:
    """The licence if ``token`` is genuine and current; a ``LicenseError`` saying why not otherwise."""
    if token is None or not token.strip():
        raise LicenseMissing("no licence is installed")
    if public_key is None:
        raise LicenseMissing("no licence public key is configured")
    parts = token.strip().split(".")
    if len(parts) != 3 or parts[0] != PREFIX:
        raise LicenseInvalid("the licence is not a lector licence")
    try:
        payload, signature = _unb64(parts[1]), _unb64(parts[2])
    except (ValueError, binascii.Error) as exc:
        raise LicenseInvalid("the licence is not valid base64") from exc
    try:
        public_key.verify(signature, payload)
    except InvalidSignature as exc:
        raise LicenseInvalid("the licence signature does not verify") from exc
    try:
        body = json.loads(payload)
        models = body.get("models")
        lic = License(
            id=str(body["id"]), customer=str(body["customer"]), issued=_instant(body["issued"]),
            expires=_instant(body["expires"]), models=tuple(str(m) for m in models) if models is not None else None,
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise LicenseInvalid(f"the licence payload is malformed: {exc}") from exc
    if (now or datetime.now(UTC)) >= lic.expires:
        raise LicenseExpired(f"the licence of {lic.customer} expired at {_iso(lic.expires)}")
    return lic


# --- the gate the API service holds --------------------------------------------------------------


class LicenseGate:
    """The current licence verdict: checked at start, then every ``interval_s`` in a thread.

    ``token_source`` is read at every check, so a renewed licence file takes effect without a
    restart. Expiry is also judged at every ``status`` call, so a licence that runs out between
    two checks stops being valid on time.
    """

    def __init__(
        self,
        *,
        token_source: Callable[[], str | None],
        public_key: str | None,
        license_url: str | None = None,
        interval_s: float = 300.0,
        http_timeout_s: float = 5.0,
        clock: Callable[[], datetime] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._token_source = token_source
        self._public_key_text = public_key
        self._license_url = license_url
        self._interval = interval_s
        self._clock = clock or (lambda: datetime.now(UTC))
        self._http = httpx.Client(timeout=http_timeout_s, transport=transport) if license_url else None
        self._license: License | None = None
        self._reason = "not checked yet"
        self._revoked: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # state

    @property
    def license(self) -> License | None:
        with self._lock:
            lic = self._license
        return lic if lic is not None and self._clock() < lic.expires else None

    @property
    def status(self) -> str:
        """``valid`` or ``expired-or-not-set``: the vendor API contract's ``licenseStatus``."""
        return VALID if self.license is not None else NOT_VALID

    @property
    def reason(self) -> str:
        with self._lock:
            lic, reason = self._license, self._reason
        if lic is not None and self._clock() >= lic.expires:
            return f"the licence of {lic.customer} expired at {_iso(lic.expires)}"
        return reason

    def check(self) -> str:
        """Verify now (offline, then online when configured); returns the new status."""
        token = self._token_source()
        try:
            key = load_public_key(self._public_key_text) if self._public_key_text else None
            lic = verify(token, key, now=self._clock())
        except LicenseError as exc:
            with self._lock:
                self._license, self._reason = None, str(exc)
            log.warning("licence not valid: %s", exc)
            return self.status
        revoked = self._online(token or "", lic)
        with self._lock:
            if revoked:
                self._license, self._reason = None, revoked
            else:
                self._license, self._reason = lic, "valid"
        return self.status

    def _online(self, token: str, lic: License) -> str | None:
        """The revocation reason from the licence endpoint, or None (valid, or not reachable)."""
        if self._http is None or self._license_url is None:
            return None
        try:
            response = self._http.post(self._license_url, json={"license": token, "id": lic.id, "customer": lic.customer})
        except httpx.HTTPError as exc:
            log.warning("licence endpoint unreachable (%s); keeping the last verdict", exc)
            return self._revoked
        if response.status_code in REVOKING_STATUSES:
            self._revoked = f"the licence endpoint refused the licence ({response.status_code})"
        elif response.status_code == 200:
            try:
                body = response.json()
            except ValueError:
                body = {}
            if isinstance(body, dict) and body.get("valid") is False:
                self._revoked = f"the licence endpoint revoked the licence: {body.get('reason', 'no reason given')}"
            elif isinstance(body, dict) and body.get("valid") is True:
                self._revoked = None
        else:
            log.warning("licence endpoint answered %s; keeping the last verdict", response.status_code)
        return self._revoked

    # background checks

    def start(self) -> None:
        self.check()
        if self._thread is None and self._interval > 0:
            self._thread = threading.Thread(target=self._loop, name="license-check", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self.check()
            except Exception:  # noqa: BLE001 - a failed check must not kill the checker
                log.exception("licence check failed")

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        if self._http is not None:
            self._http.close()


def file_or_text(text: str | None, path: str | None) -> Callable[[], str | None]:
    """A token source: the licence text if given, else the file's contents (re-read each time)."""

    def read() -> str | None:
        if text:
            return text
        if path:
            try:
                with open(path, encoding="utf-8") as handle:
                    return handle.read().strip() or None
            except OSError:
                return None
        return None

    return read
