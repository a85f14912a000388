from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lector.settings import ClientSettings, InvalidSettings, Settings


def test_starts_with_nothing_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in __import__("os").environ if n.startswith("LECTOR_")]:
        monkeypatch.delenv(name)
    settings = Settings()
    assert (settings.host, settings.port, settings.database_url) == ("127.0.0.1", 8000, None)


@pytest.mark.parametrize("token", [None, "", "changethis", "short"])
def test_prod_refuses_weak_admin_tokens(token: str | None) -> None:
    with pytest.raises(InvalidSettings, match="LECTOR_ADMIN_TOKEN must be set to a real secret"):
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
    with pytest.raises(InvalidSettings, match="LECTOR_VITS_RUNTIME: Input should be 'auto', 'torch' or 'onnxruntime'"):
        Settings()


def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("LECTOR_") or n.endswith("MODEL_URL")]:
        monkeypatch.delenv(name)


def test_the_typed_fields_keep_their_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    _clean_environment(monkeypatch)
    settings = Settings()
    assert (settings.env, settings.device, settings.log_level, settings.log_format) == ("dev", "auto", "INFO", "text")
    assert (settings.engine_dtype, settings.vits_runtime, settings.engine_batching) == ("auto", "auto", "auto")
    assert (settings.port, settings.ws_port, settings.worker_metrics_port) == (8000, 8001, None)
    urls = ("database_url", "redis_url", "s3_endpoint_url", "model_url", "license_url", "usage_url")
    assert [getattr(settings, name) for name in urls] == [None] * len(urls)


@pytest.mark.parametrize(
    ("variable", "value", "field", "kept"),
    [
        # The embedded PostgreSQL's socket URL has no host: pydantic's PostgresDsn would refuse it.
        ("LECTOR_DATABASE_URL", "postgresql+psycopg://postgres:@/postgres?host=/tmp/pg", "database_url",
         "postgresql+psycopg://postgres:@/postgres?host=/tmp/pg"),
        ("LECTOR_DATABASE_URL", "postgres://u:p@db:5432/lector", "database_url", "postgres://u:p@db:5432/lector"),
        ("LECTOR_REDIS_URL", "redis://redis:6379/0", "redis_url", "redis://redis:6379/0"),
        ("LECTOR_REDIS_URL", "unix:///run/redis.sock?db=1", "redis_url", "unix:///run/redis.sock?db=1"),
        ("MODEL_URL", "http://model:8080/invocations", "model_url", "http://model:8080/invocations"),
        ("LECTOR_S3_ENDPOINT_URL", "http://minio:9000", "s3_endpoint_url", "http://minio:9000"),
        ("LECTOR_LICENSE_URL", "", "license_url", None),  # docker-compose's ${LECTOR_LICENSE_URL:-}
        ("LECTOR_LOG_LEVEL", "debug", "log_level", "DEBUG"),
        ("LECTOR_DEVICE", "cuda:1", "device", "cuda:1"),
        ("LECTOR_BROKER_URL", "amqp://guest:guest@10.210.0.1:5672/farm", "broker_url", "amqp://guest:guest@10.210.0.1:5672/farm"),
        ("LECTOR_BROKER_URL", "redis://127.0.0.1:6379/3", "broker_url", "redis://127.0.0.1:6379/3"),
    ],
)
def test_valid_values_are_kept_as_given(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, field: str, kept: str | None
) -> None:
    _clean_environment(monkeypatch)
    monkeypatch.setenv(variable, value)
    assert getattr(Settings(), field) == kept


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("LECTOR_ENV", "staging", "LECTOR_ENV: Input should be 'dev', 'test' or 'prod'"),
        ("LECTOR_ENGINE_DTYPE", "fp8", "LECTOR_ENGINE_DTYPE: Input should be 'auto', 'float32', 'bfloat16' or 'int8'"),
        ("LECTOR_LOG_FORMAT", "xml", "LECTOR_LOG_FORMAT: Input should be 'text' or 'json'"),
        ("LECTOR_LOG_LEVEL", "chatty", "LECTOR_LOG_LEVEL: Input should be 'DEBUG', 'INFO', 'WARNING', 'ERROR' or"),
        ("LECTOR_DEVICE", "tpu", "LECTOR_DEVICE: String should match pattern"),
        ("LECTOR_PORT", "70000", "LECTOR_PORT: Input should be less than or equal to 65535"),
        ("LECTOR_DATABASE_URL", "mysql://root:hunter2@db/lector",
         "LECTOR_DATABASE_URL: a PostgreSQL URL starts with one of: postgresql://, postgres://"),
        ("LECTOR_DATABASE_URL", "postgresql://u:hunter2@db:port/x", "LECTOR_DATABASE_URL: Port could not be cast"),
        ("LECTOR_REDIS_URL", "http://redis:6379", "LECTOR_REDIS_URL: a Redis URL starts with one of"),
        ("LECTOR_BROKER_URL", "kafka://u:hunter2@broker:9092", "LECTOR_BROKER_URL: a broker URL starts with one of: amqp://"),
        ("MODEL_URL", "model:8080/invocations", "MODEL_URL: "),
        ("LECTOR_USAGE_URL", "ftp://vendor/usage", "LECTOR_USAGE_URL: URL scheme should be 'http' or 'https'"),
    ],
)
def test_invalid_values_fail_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, message: str
) -> None:
    _clean_environment(monkeypatch)
    monkeypatch.setenv(variable, value)
    with pytest.raises(InvalidSettings) as info:
        Settings()
    assert str(info.value).startswith("invalid configuration: " + message)
    assert "hunter2" not in str(info.value)  # a URL may carry a password: never repeated


def test_the_jobs_client_checks_its_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LECTOR_API_URL", "localhost:8000")
    with pytest.raises(InvalidSettings, match="LECTOR_API_URL: "):
        ClientSettings()


def test_a_bad_value_stops_the_server_at_startup(tmp_path: Path) -> None:
    """``lector serve`` exits before it listens, with the variable and the reason on stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LECTOR_")}
    env.update({"LECTOR_ENGINE_DTYPE": "fp8", "LECTOR_DATA_DIR": str(tmp_path), "LECTOR_PORT": "1"})
    run = subprocess.run([sys.executable, "-c", "from lector.cli import app; app()", "serve"],
                         capture_output=True, text=True, env=env, timeout=120, check=False)
    assert run.returncode != 0
    output = " ".join((run.stdout + run.stderr).split())
    assert "invalid configuration: LECTOR_ENGINE_DTYPE: Input should be" in output
    assert "Uvicorn running" not in output


def test_the_jobs_client_follows_lector_host_and_port(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With no LECTOR_API_URL and no ``make run`` record, ``lector jobs`` talks to LECTOR_HOST:LECTOR_PORT."""
    from lector.commands.jobs import api_url

    for name in [n for n in os.environ if n.startswith("LECTOR_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("LECTOR_DATA_DIR", str(tmp_path))  # nothing recorded there
    monkeypatch.setenv("LECTOR_PORT", "8123")
    assert api_url(ClientSettings()) == "http://127.0.0.1:8123"
    monkeypatch.setenv("LECTOR_HOST", "0.0.0.0")  # a server's bind-all address: the client asks loopback
    assert api_url(ClientSettings()) == "http://127.0.0.1:8123"
    monkeypatch.setenv("LECTOR_HOST", "tts.internal")
    assert api_url(ClientSettings()) == "http://tts.internal:8123"
