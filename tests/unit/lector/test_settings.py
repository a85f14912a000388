from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from lector.settings import ClientSettings, Settings


def test_starts_with_nothing_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in __import__("os").environ if n.startswith("LECTOR_")]:
        monkeypatch.delenv(name)
    settings = Settings()
    assert (settings.host, settings.port, settings.database_url) == ("127.0.0.1", 8000, None)


@pytest.mark.parametrize("token", [None, "", "changethis", "short"])
def test_prod_refuses_weak_admin_tokens(token: str | None) -> None:
    with pytest.raises(ValidationError):
        Settings(env="prod", admin_token=token)


def test_prod_accepts_a_real_admin_token() -> None:
    assert Settings(env="prod", admin_token="x" * 32).env == "prod"


def test_the_jobs_client_reads_its_url_key_and_data_dir_through_client_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    monkeypatch.setenv("LECTOR_ENV", "prod")  # a client needs none of the server's secrets
    monkeypatch.setenv("LECTOR_API_URL", "https://api.example.com")
    monkeypatch.setenv("LECTOR_API_KEY", "k-123")
    monkeypatch.setenv("LECTOR_DATA_DIR", str(tmp_path))
    client = ClientSettings()
    assert client.api_url == "https://api.example.com"
    assert client.api_key is not None and client.api_key.get_secret_value() == "k-123"
    assert client.data_dir == tmp_path


def test_vits_runtime_defaults_to_auto_and_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LECTOR_VITS_RUNTIME", raising=False)
    assert Settings().vits_runtime == "auto"
    monkeypatch.setenv("LECTOR_VITS_RUNTIME", "torch")
    assert Settings().vits_runtime == "torch"
    monkeypatch.setenv("LECTOR_VITS_RUNTIME", "tensorrt")
    with pytest.raises(ValidationError):
        Settings()


def test_the_jobs_client_follows_lector_host_and_port(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With no LECTOR_API_URL and no ``make run`` record, ``lector jobs`` talks to LECTOR_HOST:LECTOR_PORT."""
    from lector.commands.jobs import api_url

    for name in [n for n in __import__("os").environ if n.startswith("LECTOR_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("LECTOR_DATA_DIR", str(tmp_path))  # nothing recorded there
    monkeypatch.setenv("LECTOR_PORT", "8123")
    assert api_url(ClientSettings()) == "http://127.0.0.1:8123"
    monkeypatch.setenv("LECTOR_HOST", "0.0.0.0")  # a server's bind-all address: the client asks loopback
    assert api_url(ClientSettings()) == "http://127.0.0.1:8123"
    monkeypatch.setenv("LECTOR_HOST", "tts.internal")
    assert api_url(ClientSettings()) == "http://tts.internal:8123"
