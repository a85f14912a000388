"""``lector accounts`` and ``lector keys`` run against the test database through typer's CliRunner."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from lector.commands import accounts, keys
from store.db import authenticate, make_engine, make_sessionmaker, session_scope
from store.errors import InvalidApiKey, InvalidSubscription

KEY_RE = re.compile(r"^lk_[A-Za-z0-9_-]{40}$")


@pytest.fixture
def cli_db(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("LECTOR_DATABASE_URL", pg_url)
    yield pg_url


def _authenticate(url: str, key: str) -> str:
    engine = make_engine(url, pool=False)
    try:
        with session_scope(make_sessionmaker(engine)) as session:
            account, _ = authenticate(session=session, key=key)
            return account.name
    finally:
        engine.dispose()


def _new_key(runner: CliRunner, account: str) -> str:
    result = runner.invoke(keys.app, ["create", "--account", account, "--name", "ci"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert KEY_RE.match(lines[-1]), lines  # the key, alone, on the last line of stdout
    assert sum(line.strip() == lines[-1] for line in lines) == 1  # and printed once
    return lines[-1]


def test_create_account_and_key_then_authenticate(cli_db: str) -> None:
    runner = CliRunner()
    name = f"cli-{uuid.uuid4().hex[:8]}"
    result = runner.invoke(accounts.app, ["create", name, "--subscription-days", "30"])
    assert result.exit_code == 0, result.output
    assert name in result.stdout

    key = _new_key(runner, name)
    assert _authenticate(cli_db, key) == name

    listed = runner.invoke(accounts.app, ["list"])
    assert listed.exit_code == 0 and name in listed.stdout
    key_list = runner.invoke(keys.app, ["list", "--account", name])
    assert key_list.exit_code == 0
    assert key[:12] in key_list.stdout and key not in key_list.stdout  # prefixes only


def test_duplicate_account_fails_cleanly(cli_db: str) -> None:
    runner = CliRunner()
    name = f"cli-{uuid.uuid4().hex[:8]}"
    assert runner.invoke(accounts.app, ["create", name]).exit_code == 0
    again = runner.invoke(accounts.app, ["create", name])
    assert again.exit_code == 1
    assert "AccountExists" in again.stderr


def test_key_for_unknown_account(cli_db: str) -> None:
    result = CliRunner().invoke(keys.app, ["create", "--account", f"nobody-{uuid.uuid4().hex[:8]}"])
    assert result.exit_code == 1
    assert "AccountNotFound" in result.stderr
    assert not any(KEY_RE.match(line) for line in result.stdout.splitlines())


def test_revoke_subscription_and_disable(cli_db: str) -> None:
    runner = CliRunner()
    name = f"cli-{uuid.uuid4().hex[:8]}"
    assert runner.invoke(accounts.app, ["create", name]).exit_code == 0
    key = _new_key(runner, name)

    assert runner.invoke(accounts.app, ["set-subscription", name, "--until", "2020-01-01"]).exit_code == 0
    with pytest.raises(InvalidSubscription):
        _authenticate(cli_db, key)
    assert runner.invoke(accounts.app, ["set-subscription", name, "--none"]).exit_code == 0
    assert _authenticate(cli_db, key) == name
    bad = runner.invoke(accounts.app, ["set-subscription", name])
    assert bad.exit_code != 0

    revoked = runner.invoke(keys.app, ["revoke", key[:12]])
    assert revoked.exit_code == 0, revoked.output
    with pytest.raises(InvalidApiKey):
        _authenticate(cli_db, key)

    other = _new_key(runner, name)
    assert runner.invoke(accounts.app, ["disable", name]).exit_code == 0
    with pytest.raises(InvalidSubscription):
        _authenticate(cli_db, other)


def test_set_limits(cli_db: str) -> None:
    runner = CliRunner()
    name = f"cli-{uuid.uuid4().hex[:8]}"
    assert runner.invoke(accounts.app, ["create", name]).exit_code == 0
    result = runner.invoke(
        accounts.app, ["set-limits", name, "--models", "coda, mist", "--ws-per-minute", "5"]
    )
    assert result.exit_code == 0, result.output
    listed = runner.invoke(accounts.app, ["list"])
    assert "coda, mist" in listed.stdout


def test_webhook_secret_is_printed_and_verifies_a_signature(cli_db: str) -> None:
    from scheduler.webhooks import sign, verify

    runner = CliRunner()
    name = f"cli-{uuid.uuid4().hex[:8]}"
    assert runner.invoke(accounts.app, ["create", name]).exit_code == 0
    result = runner.invoke(accounts.app, ["webhook-secret", name])
    assert result.exit_code == 0, result.output
    secret = result.stdout.strip()
    engine = make_engine(cli_db, pool=False)
    try:
        with session_scope(make_sessionmaker(engine)) as session:
            from store.db import get_account_by_name

            stored = get_account_by_name(session=session, name=name).webhook_secret
    finally:
        engine.dispose()
    assert secret == stored and len(secret) >= 32
    body = b'{"event":"job.succeeded"}'
    assert verify(secret, body, sign(stored, body))
    missing = runner.invoke(accounts.app, ["webhook-secret", "no-such-account"])
    assert missing.exit_code != 0
