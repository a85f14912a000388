"""The one place lector reads its configuration.

Built only in entry points (the FastAPI app factory, the Celery app module, the CLI, the bench
scripts, ``migrations/env.py``) and passed down as plain values; nothing else reads
``os.environ``. Every field has a default so that ``make run`` starts with nothing configured.

Values are checked when the process starts, not when first used: modes are ``Literal`` choices,
URLs are checked as URLs of their kind (kept as the strings given, so SQLAlchemy, Celery and
httpx read exactly what was configured), and a bad value raises ``InvalidSettings`` naming the
environment variable, what was wrong, and nothing of the value itself (it may hold a password).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    HttpUrl,
    SecretStr,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

_PLACEHOLDER_SECRETS = {"changethis", "changeme", "secret"}


class InvalidSettings(ValueError):
    """The environment names a value lector cannot run with; the message says which and why."""


def _checked_as(kind: Any) -> AfterValidator:
    """A string that must parse as ``kind`` (a pydantic URL type), kept exactly as given."""
    adapter: TypeAdapter[Any] = TypeAdapter(kind)

    def check(value: str) -> str:
        adapter.validate_python(value)
        return value

    return AfterValidator(check)


def _blank_is_unset(value: Any) -> Any:
    """``LECTOR_LICENSE_URL=`` (docker-compose's ``${VAR:-}``) means not set, as it always has."""
    return None if isinstance(value, str) and not value.strip() else value


def _url_of(kind: str, schemes: tuple[str, ...]) -> AfterValidator:
    """A URL whose scheme is one of ``schemes`` (with any ``+driver``), kept as given. Not pydantic's ``PostgresDsn``
    or ``RedisDsn``: they demand a host, and a socket URL has none
    (``postgresql+psycopg://postgres:@/postgres?host=/path``, the embedded server's)."""

    def check(value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme.split("+", 1)[0] not in schemes:
            raise ValueError(f"a {kind} URL starts with one of: {', '.join(s + '://' for s in schemes)}")
        _ = parts.port  # a port that is not a number raises here
        return value

    return AfterValidator(check)


PostgresUrl = Annotated[str, _url_of("PostgreSQL", ("postgresql", "postgres"))]
#: A Redis URL as redis-py and Celery take it: TCP, TLS or a Unix socket.
RedisUrl = Annotated[str, _url_of("Redis", ("redis", "rediss", "unix"))]
#: Celery's broker: RabbitMQ (AMQP, a farm of hosts) or Redis (one machine).
BrokerUrl = Annotated[str, _url_of("broker", ("amqp", "amqps", "pyamqp", "redis", "rediss", "unix"))]
#: An http(s) URL of a service lector calls (a model service, the licence and usage endpoints).
WebUrl = Annotated[str, _checked_as(HttpUrl)]
OptionalWebUrl = Annotated[WebUrl | None, BeforeValidator(_blank_is_unset)]
#: ``auto``, ``cpu``, ``cuda`` or ``cuda:N``: what torch takes, and what ``auto`` resolves to.
Device = Annotated[str, Field(pattern=r"^(auto|cpu|cuda(:[0-9]+)?)$")]
LogLevel = Annotated[
    Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"],
    BeforeValidator(lambda value: value.strip().upper() if isinstance(value, str) else value),
]
Port = Annotated[int, Field(ge=0, le=65535)]


def describe(error: ValidationError, prefix: str = "LECTOR_") -> str:
    """One line per bad value, by environment variable: ``LECTOR_ENGINE_DTYPE: Input should be ...``."""
    lines = []
    for problem in error.errors(include_input=False, include_url=False):
        field = next((str(part) for part in problem["loc"] if isinstance(part, str)), "")
        # A field read without the prefix (MODEL_URL) is located by its variable's own name.
        name = (field if field.isupper() else f"{prefix}{field.upper()}") if field else "settings"
        lines.append(f"{name}: {problem['msg'].removeprefix('Value error, ')}")
    return "invalid configuration: " + "; ".join(lines)


class _Checked(BaseSettings):
    """A ``BaseSettings`` whose bad values fail with ``InvalidSettings`` (see ``describe``)."""

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as error:
            raise InvalidSettings(describe(error)) from None


class Settings(_Checked):
    """Environment-driven settings, prefix ``LECTOR_``."""

    model_config = SettingsConfigDict(env_prefix="LECTOR_", env_file=None, extra="ignore", hide_input_in_errors=True)

    env: Literal["dev", "test", "prod"] = Field("dev", description="prod refuses placeholder secrets")
    host: str = "127.0.0.1"
    port: Port = 8000
    data_dir: Path = Field(Path(".lector"), description="project-local state for embedded services")
    # HTTP edges: a 2,000,000-character book is at most 8 MB of UTF-8 (12 MB as JSON \u escapes).
    max_body_bytes: int = Field(32 * 1024 * 1024, gt=0, description="larger request bodies get 413")
    body_timeout_s: float = Field(120.0, gt=0, description="a request body must arrive within this")
    loop_stall_ms: int = Field(
        250, ge=0, description="the API logs its event loop's stack when the loop does not answer this long; 0: off"
    )
    # `lector run`: a child that dies is restarted after a doubling backoff, this many times a minute at most.
    restart_limit_per_minute: int = Field(5, ge=1)
    restart_backoff_s: float = Field(1.0, ge=0)
    log_format: Literal["text", "json"] = Field("text", description="json: one object per line, with bound ids")
    log_level: LogLevel = "INFO"

    # None means: use the local service on its standard port if it answers, else start an embedded one.
    database_url: PostgresUrl | None = None
    redis_url: RedisUrl | None = None
    # The farm's broker (docs/scaling.md): amqp://... for RabbitMQ; None: Celery uses redis_url's Redis.
    broker_url: BrokerUrl | None = None
    broker_heartbeat_s: int = Field(
        10, gt=0, description="AMQP heartbeat: RabbitMQ requeues a silent host's tasks after about two of these"
    )

    # Object store: S3 when s3_bucket is set, else a local directory under data_dir.
    s3_endpoint_url: OptionalWebUrl = None
    s3_bucket: str | None = None
    s3_region: str = "us-east-1"
    s3_access_key_id: str | None = None
    s3_secret_access_key: SecretStr | None = None
    s3_presign_seconds: int = 3600
    objects_dir: Path | None = None

    # Synthesis
    torch_threads: int = 0  # 0: every core
    device: Device = "auto"
    engine_dtype: Literal["auto", "float32", "bfloat16", "int8"] = Field(
        "auto",
        description="neural precision: auto (Kokoro in bfloat16 on a CPU with AMX or AVX-512 BF16, float32 elsewhere: "
        "the fastest precision that sounds as float32 does, see docs/voices.md), float32, bfloat16, "
        "int8 (Kokoro on CPU, opt-in: it sounds worse)",
    )
    vits_runtime: Literal["auto", "torch", "onnxruntime"] = Field(
        "auto",
        description="who runs VITS voices: auto (the voice's graph on onnxruntime on CPU in float32, "
        "faster there than PyTorch; our PyTorch modules on GPUs), torch, onnxruntime (CPU only)",
    )
    kokoro_kernels: Literal["auto", "eager", "compiled", "graphs"] = Field(
        "auto",
        description="Kokoro's decoder chains: auto (on GPUs fused by torch.compile, small batches replayed "
        "from CUDA graphs; eager on CPUs), eager, "
        "compiled (on a CPU too: 0.65x onnxruntime's time in bfloat16 on a Zen 5 against 0.83x eager, "
        "after some 30 s of compiling in a process's first calls, and again for a new shape), "
        "graphs (GPUs: compiled, and batches of up to 16 replayed from CUDA graphs, one recorded per shape)",
    )
    kokoro_convolutions: Literal["auto", "direct", "spectral"] = Field(
        "auto",
        description="Kokoro's long generator convolutions: auto (spectral on a CPU in float32, and in "
        "bfloat16 where there is no AMX; direct elsewhere), direct (oneDNN's; with AMX, in bfloat16, over "
        "time-major activations), spectral (blockwise in the frequency "
        "domain: the same arithmetic in about three quarters of the decoder's time, for some 560 MB more "
        "memory in float32, 280 in bfloat16)",
    )
    voice_catalog: Path | None = Field(None, description="a catalog TOML of your own; default: the shipped one")
    model_url: OptionalWebUrl = Field(None, validation_alias="MODEL_URL")
    engine_slots: int = Field(
        -1, description="synthesis steps at once in the API; -1: one per core (64 with MODEL_URL), 0: anyio's pool"
    )
    stream_first_audio_ms: int = Field(
        300, ge=0, description="a stream's first sentence is cut at a clause when the voice would take longer to say it whole; 0: never cut"
    )
    blocking_threads: int = Field(
        16, ge=1, description="the API's threads for blocking calls (database, object store, Redis), all started before serving"
    )

    # Pronunciation lexicons (W3C PLS), per account
    lexicons_per_account: int = Field(100, ge=0, description="named lexicons an account may store")
    lexicon_max_bytes: int = Field(100_000, gt=0, description="bytes of one PLS document")
    lexicons_per_request: int = Field(5, ge=0, description="lexicons one request may name")

    # Jobs
    visibility_timeout_s: int = Field(1800, description="longer than the longest task, or healthy tasks run twice")
    stall_after_s: int = Field(300, description="the reaper re-sends work of a job unchanged this long")
    max_job_chars: int = 2_000_000
    max_active_jobs: int = Field(0, ge=0, description="unfinished (queued or running) jobs an account may have at once; 0: no limit")
    webhook_allow_private: bool = False
    webhook_timeout_s: float = 10.0
    job_batch_chars: int = Field(4000, description="characters per synthesize task")
    assembly_workers: int = Field(0, ge=0, description="segments of a book measured and encoded at once; 0: every core")
    assembly_ahead: bool = Field(
        True, description="books in chapter loudness scope are measured and encoded on the cpu queue while synthesis runs"
    )
    live_playlist: bool = Field(
        True, description="a running job's done chunks become HLS segments on the live queue, at the job's "
        "loudness target (`/v1/jobs/{id}/stream.m3u8`: listen while it renders)",
    )
    # The cancel check runs between engine calls. 1,500 suits a CPU; a GPU wants far larger calls
    # (measured on an H100: 1,000x realtime at 1,500, 1,500-1,900x at 20,000).
    synth_group_chars: int = Field(1500, gt=0, description="characters per engine call in a synthesize task (GPU: 20000)")
    account_batch_window: int = Field(
        4, ge=1, description="batches of one account's jobs on the synth queue at a time (fairness between accounts)"
    )
    retention_days: float = Field(30.0, description="a finished job's audio and objects are deleted after this")

    admin_token: SecretStr | None = None

    # Self-hosted mode (`lector serve --self-hosted`): no database, Redis or object store.
    ws_port: Port = 8001
    api_keys: str | None = Field(None, description="comma-separated keys, plaintext or sha256:<hex>")
    api_keys_file: Path | None = Field(None, description="one key per line; store sha256:<hex> to keep them hashed at rest")
    arcana_eng_model_url: OptionalWebUrl = Field(None, validation_alias="ARCANA_ENG_MODEL_URL")
    arcana_spa_model_url: OptionalWebUrl = Field(None, validation_alias="ARCANA_SPA_MODEL_URL")
    arcana_fra_model_url: OptionalWebUrl = Field(None, validation_alias="ARCANA_FRA_MODEL_URL")
    arcana_ger_model_url: OptionalWebUrl = Field(None, validation_alias="ARCANA_GER_MODEL_URL")
    model_connect_timeout_s: float = 0.5  # short: a down model service must fail a request fast
    model_read_timeout_s: float = 60.0
    license: SecretStr | None = Field(None, description="the licence token itself (LECTOR_LICENSE)")
    license_file: Path | None = None
    license_public_key: str | None = Field(None, description="the vendor's Ed25519 public key, base64")
    license_url: OptionalWebUrl = None
    license_check_interval_s: float = 300.0
    usage_url: OptionalWebUrl = None
    usage_spool_dir: Path | None = None  # default: data_dir / "usage-spool"
    usage_flush_interval_s: float = 10.0

    # Model service (`lector model-server`)
    model_voice: str | None = Field(
        None, description="catalog speaker(s) to serve, comma-separated, or 'neural'; default: the bundled voice"
    )
    worker_metrics_port: Port | None = Field(None, description="lector worker: serve /metrics on this port")
    model_voice_file: Path | None = Field(
        None, description="a file of speakers to serve, one a line (what a language package image provides)"
    )
    model_window_ms: float = 5.0
    model_max_batch: int = 16
    # The same batcher in the API and worker processes, for neural voices run in-process.
    engine_batching: Literal["auto", "on", "off"] = Field(
        "auto",
        description="gather concurrent sentences of in-process neural voices into shared forward passes "
        "(window model_window_ms, at most model_max_batch sentences): auto is on for GPUs, off on CPU",
    )

    @model_validator(mode="after")
    def _refuse_placeholder_secrets(self) -> Settings:
        if self.env == "prod":
            # Webhooks are signed with each account's own secret; the admin token is the one
            # process-wide secret, and a guessable one would open the billing API.
            secret = "" if self.admin_token is None else self.admin_token.get_secret_value().strip().lower()
            if len(secret) < 16 or secret in _PLACEHOLDER_SECRETS:
                raise ValueError("LECTOR_ADMIN_TOKEN must be set to a real secret (16+ characters) in prod")
        return self

    @property
    def resolved_objects_dir(self) -> Path:
        return self.objects_dir or (self.data_dir / "objects")

    @property
    def usage_outbox_dir(self) -> Path:
        """The cloud API's usage outbox: rows PostgreSQL could not take wait here until it can. One
        folder per serving port (the spool is safe for one process, and a process restarted on that
        port replays what its predecessor left), so ``data_dir`` must outlive the container: the
        deployments mount a persistent volume there (``tests/unit/infra`` checks it)."""
        return self.data_dir / f"usage-outbox-{self.port}"


class ClientSettings(_Checked):
    """What ``lector jobs`` (a client of the API, often on another machine) reads: prefix ``LECTOR_``.
    Apart from ``Settings`` so that a client needs none of the server's secrets or validation."""

    model_config = SettingsConfigDict(env_prefix="LECTOR_", env_file=None, extra="ignore", hide_input_in_errors=True)

    # The API it talks to and the key it sends. Default: what `make run` recorded under data_dir
    # (run.json), else http://LECTOR_HOST:LECTOR_PORT, and the dev key `make run` wrote.
    api_url: OptionalWebUrl = None
    api_key: SecretStr | None = None
    data_dir: Path = Field(Path(".lector"), description="where `make run` wrote run.json and the dev key")
    host: str = "127.0.0.1"
    port: Port = 8000
