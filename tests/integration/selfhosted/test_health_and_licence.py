"""``/health`` follows the model service down and back up; licence states gate synthesis."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from facade.license import NOT_VALID, VALID
from speech.engines.base import Engine
from tests.integration.selfhosted.conftest import Api, licence, model_service
from tests.support.servers import wait_until

BODY = {"text": "Is the model there?", "speaker": "joe", "modelId": "mist"}


def test_model_down_then_up(start_api: Callable[..., Api], joe_engine: Engine) -> None:
    model = model_service(joe_engine, "joe")
    api = start_api(model_url=model.url + "/invocations")
    try:
        assert api.health()["modelReachable"] is True
        assert api.post(BODY, accept="audio/pcm").status_code == 200

        model.stop()  # the port stays bound, nothing answers
        health = api.health()
        assert health["modelReachable"] is False
        assert health["apiStatus"] == "ok" and health["licenseStatus"] == VALID
        for accept in ("audio/pcm", None):
            start = time.monotonic()
            failed = api.post(BODY, accept=accept)
            assert time.monotonic() - start < 2.0  # no hang
            assert failed.status_code == 500
            assert failed.json() == {"error": "internal error"}

        model.start()  # no restart of the API, no call to make: it recovers by itself
        assert wait_until(lambda: api.health()["modelReachable"] is True, timeout=60)
        assert api.post(BODY, accept="audio/pcm").status_code == 200
    finally:
        model.close()


def test_a_warming_model_is_not_reachable(start_api: Callable[..., Api], joe_engine: Engine) -> None:
    import threading

    from facade.model_service import create_model_app
    from tests.support.servers import ServerThread

    release = threading.Event()

    def slow_factory() -> Engine:
        release.wait(30)
        return joe_engine

    model = ServerThread(create_model_app(slow_factory, voice="joe")).start()
    try:
        api = start_api(model_url=model.url + "/invocations")
        assert api.health()["modelReachable"] is False  # up, but not warmed up
        assert api.post(BODY, accept="audio/pcm").status_code == 500
        release.set()
        assert wait_until(lambda: api.health()["modelReachable"] is True, timeout=60)
    finally:
        release.set()
        model.close()


def test_health_timestamp_and_shape(start_api: Callable[..., Api], joe_service) -> None:  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    health = start_api(model_url=joe_service.url + "/invocations").health()
    assert set(health) == {"apiStatus", "timestamp", "licenseStatus", "modelReachable"}
    stamp = datetime.fromisoformat(health["timestamp"].replace("Z", "+00:00"))
    assert abs((datetime.now(UTC) - stamp).total_seconds()) < 30


@pytest.mark.parametrize("state", ["missing", "expired", "forged", "no-public-key"])
def test_without_a_valid_licence_synthesis_is_refused(
    state: str, start_api: Callable[..., Api], joe_service, licence_keys: tuple[bytes, str]  # type: ignore[no-untyped-def]
) -> None:
    token = {"missing": None, "expired": licence(licence_keys, days=-1), "no-public-key": licence(licence_keys)}.get(state)
    if state == "forged":
        from facade.license import generate_keypair

        token = licence(generate_keypair())  # signed by someone else's key
    overrides = {"license_public_key": None} if state == "no-public-key" else {}
    api = start_api(model_url=joe_service.url + "/invocations", license_token=token, **overrides)
    assert api.health()["licenseStatus"] == NOT_VALID
    refused = api.post(BODY, accept="audio/pcm")
    assert (refused.status_code, refused.text) == (401, "invalid subscription")
    with pytest.raises(InvalidStatus) as info:
        connect(f"{api.ws_url}/ws3?speaker=joe", additional_headers=api.headers, open_timeout=10)
    assert info.value.response.status_code == 401


def test_a_model_outside_the_licence_is_forbidden(
    start_api: Callable[..., Api], joe_service, licence_keys: tuple[bytes, str]  # type: ignore[no-untyped-def]
) -> None:
    api = start_api(model_url=joe_service.url + "/invocations", license_token=licence(licence_keys, models=["mist"]))
    assert api.post(BODY, accept="audio/pcm").status_code == 200
    forbidden = api.post({**BODY, "modelId": "arcana"}, accept="audio/pcm")
    assert (forbidden.status_code, forbidden.text) == (403, "access forbidden")


def test_installing_a_licence_file_takes_effect_without_a_restart(
    start_api: Callable[..., Api], joe_service, licence_keys: tuple[bytes, str], tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    path = tmp_path / "licence.txt"
    api = start_api(model_url=joe_service.url + "/invocations", license_token=None, license_file=str(path))
    assert api.health()["licenseStatus"] == NOT_VALID
    assert api.post(BODY, accept="audio/pcm").status_code == 401
    path.write_text(licence(licence_keys) + "\n")
    assert wait_until(lambda: api.health()["licenseStatus"] == VALID, timeout=10)
    assert api.post(BODY, accept="audio/pcm").status_code == 200
    path.write_text(licence(licence_keys, days=-1))  # replaced by an expired one
    assert wait_until(lambda: api.health()["licenseStatus"] == NOT_VALID, timeout=10)
