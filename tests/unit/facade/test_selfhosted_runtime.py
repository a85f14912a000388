"""Self-hosted keys and the licence-aware authenticator."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from facade import errors as e
from facade import license as lic
from facade.selfhosted_runtime import hash_key, licensed_authenticator, parse_keys


def test_keys_from_the_variable_and_the_file() -> None:
    lines = ["# operators' keys", "sha256:" + "ab" * 32, "  plain-key  # for the demo", ""]
    assert parse_keys(" k1, ,k2 ", lines) == ["k1", "k2", "sha256:" + "ab" * 32, "plain-key"]
    assert parse_keys(None) == []


def _gate(token: str | None, public: str) -> lic.LicenseGate:
    gate = lic.LicenseGate(token_source=lambda: token, public_key=public, interval_s=0)
    gate.check()
    return gate


def test_key_first_then_licence_then_models() -> None:
    private, public = lic.generate_keypair()
    key = lic.load_private_key(private)
    valid = lic.issue(key, customer="ACME", expires=datetime.now(UTC) + timedelta(days=1), models=["mist"])
    authenticate = licensed_authenticator([hash_key("secret")], _gate(valid, public))
    principal = authenticate("secret")  # a hashed-at-rest key matches its plaintext
    assert principal.account_name == "ACME"
    assert principal.may_use(model="mist") and not principal.may_use(model="coda")
    with pytest.raises(e.ApiError) as wrong:
        authenticate("nope")
    assert (wrong.value.status, wrong.value.message) == (401, e.INVALID_KEY)

    expired = lic.issue(key, customer="ACME", expires=datetime.now(UTC) - timedelta(days=1))
    for token in (None, expired):
        refuse = licensed_authenticator(["secret"], _gate(token, public))
        with pytest.raises(e.ApiError) as no_licence:
            refuse("secret")
        assert (no_licence.value.status, no_licence.value.message) == (401, e.INVALID_SUBSCRIPTION)
        with pytest.raises(e.ApiError) as still_wrong:
            refuse("nope")
        assert still_wrong.value.message == e.INVALID_KEY
