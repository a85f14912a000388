"""Licences: issue, verify offline, expiry, tampering, and the gate's online revocation."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from facade import license as lic
from facade.license import LicenseGate


@pytest.fixture(scope="module")
def keys() -> tuple[bytes, str]:
    return lic.generate_keypair()


def _token(keys: tuple[bytes, str], *, days: float = 30, models: list[str] | None = None) -> str:
    return lic.issue(lic.load_private_key(keys[0]), customer="ACME", expires=datetime.now(UTC) + timedelta(days=days),
                     models=models)


def test_a_genuine_licence_verifies_with_its_fields(keys: tuple[bytes, str]) -> None:
    token = _token(keys, models=["mist", "arcana"])
    verified = lic.verify(token, lic.load_public_key(keys[1]))
    assert verified.customer == "ACME"
    assert verified.models == ("mist", "arcana")


def test_expired_missing_tampered_and_foreign_licences_are_refused(keys: tuple[bytes, str]) -> None:
    public = lic.load_public_key(keys[1])
    with pytest.raises(lic.LicenseExpired):
        lic.verify(_token(keys, days=-1), public)
    with pytest.raises(lic.LicenseMissing):
        lic.verify(None, public)
    with pytest.raises(lic.LicenseMissing):
        lic.verify(_token(keys), None)
    prefix, payload, signature = _token(keys).split(".")
    body = json.loads(lic._unb64(payload))
    body["customer"] = "Someone Else"
    forged = ".".join([prefix, lic._b64(json.dumps(body).encode()), signature])
    with pytest.raises(lic.LicenseInvalid, match="signature"):
        lic.verify(forged, public)
    other_public = lic.load_public_key(lic.generate_keypair()[1])
    with pytest.raises(lic.LicenseInvalid):
        lic.verify(_token(keys), other_public)
    with pytest.raises(lic.LicenseInvalid):
        lic.verify("not a licence", public)


def test_the_gate_judges_expiry_at_every_call(keys: tuple[bytes, str]) -> None:
    now = [datetime.now(UTC)]
    token = lic.issue(lic.load_private_key(keys[0]), customer="ACME", expires=now[0] + timedelta(hours=1))
    gate = LicenseGate(token_source=lambda: token, public_key=keys[1], interval_s=0, clock=lambda: now[0])
    assert gate.check() == lic.VALID
    now[0] += timedelta(hours=2)  # no new check: the licence still runs out on time
    assert gate.status == lic.NOT_VALID
    assert "expired" in gate.reason


def test_the_gate_rereads_its_source(keys: tuple[bytes, str]) -> None:
    current: list[str | None] = [None]
    gate = LicenseGate(token_source=lambda: current[0], public_key=keys[1], interval_s=0)
    assert gate.check() == lic.NOT_VALID
    current[0] = _token(keys)
    assert gate.check() == lic.VALID


def test_online_check_revokes_but_an_outage_keeps_the_verdict(keys: tuple[bytes, str]) -> None:
    answer: dict[str, object] = {"status": 200, "body": {"valid": True}}
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        if answer["status"] == "down":
            raise httpx.ConnectError("refused")
        return httpx.Response(int(answer["status"]), json=answer["body"])  # type: ignore[arg-type]

    token = _token(keys)
    gate = LicenseGate(token_source=lambda: token, public_key=keys[1], license_url="http://vendor/licence",
                       interval_s=0, transport=httpx.MockTransport(handler))
    assert gate.check() == lic.VALID
    assert seen[-1]["license"] == token
    answer["status"] = "down"
    assert gate.check() == lic.VALID  # the vendor's outage is not the customer's
    answer.update(status=200, body={"valid": False, "reason": "refunded"})
    assert gate.check() == lic.NOT_VALID and "refunded" in gate.reason
    answer["status"] = "down"
    assert gate.check() == lic.NOT_VALID  # a revocation also survives an outage
    answer.update(status=200, body={"valid": True})
    assert gate.check() == lic.VALID
    answer.update(status=410, body={})
    assert gate.check() == lic.NOT_VALID
    gate.close()


def test_the_public_key_also_reads_as_pem(keys: tuple[bytes, str]) -> None:
    from cryptography.hazmat.primitives import serialization

    pem = lic.load_private_key(keys[0]).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    assert lic.verify(_token(keys), lic.load_public_key(pem)).customer == "ACME"
    with pytest.raises(lic.LicenseInvalid):
        lic.load_public_key("!!!")
