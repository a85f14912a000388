from __future__ import annotations

import pytest
from pydantic import ValidationError

from lector.settings import Settings


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


def test_vits_runtime_defaults_to_auto_and_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LECTOR_VITS_RUNTIME", raising=False)
    assert Settings().vits_runtime == "auto"
    monkeypatch.setenv("LECTOR_VITS_RUNTIME", "torch")
    assert Settings().vits_runtime == "torch"
    monkeypatch.setenv("LECTOR_VITS_RUNTIME", "tensorrt")
    with pytest.raises(ValidationError):
        Settings()
