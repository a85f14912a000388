"""What a self-hosted API process holds: keys, the licence gate, the usage spool, the model routes.

No database, Redis or object store: keys come from configuration, usage goes to a disk spool and
on to ``LECTOR_USAGE_URL``, and every synthesis is proxied to a model service. The HTTP app
(:8000) and the WebSocket app (:8001) share one runtime; each app's lifespan acquires it and
the last one out closes it, so background threads start once and stop once.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from facade import errors as e
from facade.auth import static_authenticator
from facade.deps import Access, Principal, Services, Speech, Usage
from facade.license import LicenseGate, file_or_text
from facade.model_routes import ModelRoutes
from facade.remote_engine import RemoteSynthesizer, service_url
from facade.usage_spool import UsageSpool


@dataclass(frozen=True, slots=True)
class SelfHostedConfig:
    """Plain values, derived from ``Settings`` by the entry point (``lector serve --self-hosted``)."""

    api_keys: Sequence[str]
    model_url: str | None
    arcana_urls: Mapping[str, str] = field(default_factory=dict)  # "en"/"es"/"fr"/"de" -> URL
    license_token: str | None = None
    license_file: str | None = None
    license_public_key: str | None = None
    license_url: str | None = None
    license_check_interval_s: float = 300.0
    usage_url: str | None = None
    usage_spool_dir: Path = Path(".lector/usage-spool")
    usage_flush_interval_s: float = 10.0
    model_connect_timeout_s: float = 0.5
    model_read_timeout_s: float = 60.0
    health_timeout_s: float = 1.0


def parse_keys(csv: str | None, lines: Iterable[str] = ()) -> list[str]:
    """Keys from ``LECTOR_API_KEYS`` (comma-separated) and a keys file's lines (``#`` comments)."""
    keys = [k.strip() for k in (csv or "").split(",")]
    keys += [line.split("#", 1)[0].strip() for line in lines]
    return [k for k in keys if k]


def read_keys_file(path: str | Path | None) -> list[str]:
    if path is None:
        return []
    return Path(path).read_text(encoding="utf-8").splitlines()


def hash_key(key: str) -> str:
    """The at-rest form of a key for the keys file: ``sha256:<hex>``."""
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def licensed_authenticator(keys: Sequence[str], gate: LicenseGate) -> Callable[[str], Principal]:
    """A configured key, then a valid licence: 401 ``invalid api key`` before 401 ``invalid
    subscription`` (see ``facade.license`` for why the licence is the subscription). The
    licence's models become the principal's allowed models, so an uncovered model is 403."""
    check_key = static_authenticator(keys)

    def authenticate(key: str) -> Principal:
        principal = check_key(key)
        lic = gate.license
        if lic is None:
            raise e.ApiError(401, e.INVALID_SUBSCRIPTION)
        principal.account_name = lic.customer
        principal.allowed_models = list(lic.models) if lic.models is not None else None
        return principal

    return authenticate


class SelfHostedRuntime:
    """Built from a config; ``acquire``/``release`` by each app's lifespan."""

    def __init__(
        self,
        config: SelfHostedConfig,
        *,
        catalog_factory: Callable[[], Any] | None = None,
        clock: Callable[[], Any] | None = None,
    ) -> None:
        self.config = config
        self.routes = ModelRoutes(config.model_url, dict(config.arcana_urls))
        self._catalog_factory = catalog_factory or _default_catalog
        self._clock = clock
        self.gate = LicenseGate(
            token_source=file_or_text(config.license_token, config.license_file),
            public_key=config.license_public_key, license_url=config.license_url,
            interval_s=config.license_check_interval_s, clock=clock,
        )
        self.spool = UsageSpool(config.usage_spool_dir, config.usage_url, interval_s=config.usage_flush_interval_s)
        self.synthesizer = RemoteSynthesizer(
            self.routes.route, connect_timeout=config.model_connect_timeout_s, read_timeout=config.model_read_timeout_s,
        )
        self.services: Services | None = None
        self._users = 0
        self._lock = threading.Lock()

    def acquire(self) -> Services:
        with self._lock:
            if self.services is None:
                self.gate.start()
                self.spool.start()
                self.services = Services(  # no database, object store or task queue
                    speech=Speech(catalog=self._catalog_factory(), synthesizer=self.synthesizer),
                    access=Access(authenticator=licensed_authenticator(self.config.api_keys, self.gate)),
                    usage=Usage(sink=self._spool_usage), self_hosted=True, clock=self._clock,
                )
            self._users += 1
            return self.services

    def _spool_usage(self, record: dict[str, Any]) -> None:
        """One billed synthesis, tagged with the licence it ran under (whose usage it is)."""
        lic = self.gate.license
        self.spool.append({**record, "customer": lic.customer if lic else None, "licenseId": lic.id if lic else None})

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users > 0 or self.services is None:
                return
            self.services = None
        self.gate.close()
        self.spool.close()
        self.synthesizer.close()

    async def models_reachable(self) -> bool:
        """Every configured model service answers ``/readyz`` 200 within the health timeout."""
        urls = self.routes.urls()
        if not urls:
            return False
        timeout = httpx.Timeout(self.config.health_timeout_s)
        async with httpx.AsyncClient(timeout=timeout) as client:

            async def ready(url: str) -> bool:
                try:
                    response = await client.get(service_url(url, "readyz"))
                except httpx.HTTPError:
                    return False
                return response.status_code == 200

            results = await asyncio.gather(*(ready(url) for url in urls))
        return all(results)


def _default_catalog() -> Any:
    from speech.voices import Catalog

    return Catalog.load()
