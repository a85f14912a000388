"""Model services with real catalog voices and self-hosted API pairs, on loopback, in threads.

``joe`` (the neural voice) and ``mateo`` (eSpeak NG, Spanish) are loaded once through the catalog
and ``speech.engines.registry``, exactly as ``lector model-server`` loads them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from facade import license as lic
from facade.model_service import create_model_app
from facade.selfhosted import create_selfhosted_app, create_selfhosted_ws_app
from facade.selfhosted_runtime import SelfHostedConfig, SelfHostedRuntime, hash_key
from speech.engines.base import Engine
from speech.engines.registry import load_engine
from speech.voices import Catalog
from tests.support.servers import ServerThread, wait_until

API_KEY = "test-key-1"
HASHED_KEY = "another-key"


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return Catalog.load()


def _voice(catalog: Catalog, speaker: str) -> Any:
    return next(v for v in catalog.voices if v.speaker == speaker)


@pytest.fixture(scope="session")
def joe_engine(catalog: Catalog) -> Engine:
    return load_engine(_voice(catalog, "joe"), device="cpu", threads=1)


@pytest.fixture(scope="session")
def mateo_engine(catalog: Catalog) -> Engine:
    return load_engine(_voice(catalog, "mateo"))


def model_service(engine: Engine, voice: str, **kwargs: Any) -> ServerThread:
    """A started model service; waits for ``/readyz``."""
    server = ServerThread(create_model_app(lambda: engine, voice=voice, **kwargs)).start()
    assert wait_until(lambda: httpx.get(server.url + "/readyz").status_code == 200, timeout=60)
    return server


@pytest.fixture(scope="module")
def joe_service(joe_engine: Engine) -> Iterator[ServerThread]:
    server = model_service(joe_engine, "joe", window_ms=10, max_batch=16)
    yield server
    server.close()


@pytest.fixture(scope="session")
def licence_keys() -> tuple[bytes, str]:
    return lic.generate_keypair()


def licence(keys: tuple[bytes, str], *, days: float = 30, models: list[str] | None = None) -> str:
    return lic.issue(lic.load_private_key(keys[0]), customer="ACME Corp",
                     expires=datetime.now(UTC) + timedelta(days=days), models=models)


@dataclass
class Api:
    http: ServerThread
    ws: ServerThread
    runtime: SelfHostedRuntime
    headers: dict[str, str] = field(default_factory=lambda: {"Authorization": f"Bearer {API_KEY}"})

    @property
    def url(self) -> str:
        return self.http.url

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.ws.port}"

    def post(self, body: dict[str, Any], accept: str | None = None, **kwargs: Any) -> httpx.Response:
        headers = dict(self.headers)
        if accept is not None:
            headers["Accept"] = accept
        return httpx.post(self.url + "/", json=body, headers=headers, timeout=60, **kwargs)

    def health(self) -> dict[str, Any]:
        response = httpx.get(self.url + "/health", timeout=10)
        assert response.status_code == 200
        return response.json()  # type: ignore[no-any-return]

    def stop(self) -> None:
        self.ws.close()
        self.http.close()


@pytest.fixture
def start_api(tmp_path: Path, licence_keys: tuple[bytes, str]) -> Iterator[Callable[..., Api]]:
    """``start_api(model_url=..., **config)``: an API pair with a valid licence unless told otherwise."""
    started: list[Api] = []

    def start(**overrides: Any) -> Api:
        config = SelfHostedConfig(
            api_keys=[API_KEY, hash_key(HASHED_KEY)], model_url=None,
            license_token=licence(licence_keys), license_public_key=licence_keys[1],
            usage_spool_dir=tmp_path / "spool", usage_flush_interval_s=0.1, license_check_interval_s=0.2,
        )
        config = replace(config, **overrides)
        http_app = create_selfhosted_app(config)
        runtime = http_app.state.runtime
        api = Api(ServerThread(http_app).start(), ServerThread(create_selfhosted_ws_app(runtime)).start(), runtime)
        started.append(api)
        return api

    yield start
    for api in started:
        api.stop()
