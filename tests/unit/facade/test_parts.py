"""A deployment built without a part its routes need does not start, and says what is missing
(``facade.parts``), instead of answering 500 at the first request that needs it."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import pytest
from fastapi.testclient import TestClient

from facade.app import CLOUD_NEEDS, create_app
from facade.deps import Access, Brokers, JobRules, Principal, Services, Speech, Storage
from facade.parts import MissingParts, Part, missing
from facade.selfhosted import create_selfhosted_app
from facade.selfhosted_runtime import SelfHostedConfig, SelfHostedRuntime
from scheduler.queue import Dispatcher, make_celery
from speech.voices import Catalog
from store.objects.local import LocalObjectStore

T = TypeVar("T")


def _nobody(key: str) -> Principal:
    raise AssertionError("no request is made")


def _services(tmp_path: Path, *, without: frozenset[Part] = frozenset()) -> Services:
    """A complete cloud deployment, but for the parts named in ``without``."""
    def given(part: Part, value: T) -> T | None:
        return None if part in without else value

    return Services(
        speech=Speech(catalog=Catalog.load(), synthesizer=None),  # type: ignore[arg-type]
        storage=Storage(session_factory=given(Part.DATABASE, lambda: None),  # type: ignore[arg-type, return-value]
                        objects=given(Part.OBJECTS, LocalObjectStore(tmp_path))),
        brokers=Brokers(dispatcher=given(Part.DISPATCHER, Dispatcher(make_celery("memory://")))),
        access=Access(authenticator=given(Part.AUTHENTICATOR, _nobody)),
        jobs=JobRules(max_job_chars=given(Part.JOB_LIMIT, 1000)),
    )


def test_the_cloud_app_without_an_object_store_does_not_start(tmp_path: Path) -> None:
    closed: list[bool] = []
    app = create_app(lambda: (_services(tmp_path, without=frozenset({Part.OBJECTS})), lambda: closed.append(True)))
    with pytest.raises(MissingParts) as refused, TestClient(app):
        pass
    message = str(refused.value)
    assert message.startswith("lector cannot start")
    assert "/v1/jobs needs the object store (LECTOR_S3_BUCKET, or LECTOR_OBJECTS_DIR) (Services.storage.objects)" in message
    assert closed == [True]  # what was built is let go


def test_every_missing_part_is_named_with_the_routes_that_need_it(tmp_path: Path) -> None:
    services = _services(tmp_path, without=frozenset({Part.DATABASE, Part.DISPATCHER, Part.AUTHENTICATOR, Part.JOB_LIMIT}))
    lacking = missing(services, CLOUD_NEEDS)
    for routes, part in (("/v1/jobs", Part.DISPATCHER), ("/v1/jobs", Part.JOB_LIMIT), ("/admin", Part.DATABASE),
                         ("/v1/lexicons", Part.DATABASE), ("/v1/usage", Part.AUTHENTICATOR)):
        assert any(line.startswith(f"{routes} needs") and f"(Services.{part.value})" in line for line in lacking), (routes, part)
    assert not any("objects" in line for line in lacking)
    assert missing(_services(tmp_path), CLOUD_NEEDS) == []


def test_a_complete_cloud_deployment_starts(tmp_path: Path) -> None:
    app = create_app(lambda: (_services(tmp_path), lambda: None))
    with TestClient(app) as client:
        assert client.get("/v1/usage").status_code == 401  # serving: the key check answers


def test_the_self_hosted_api_starts_without_database_store_or_queue(tmp_path: Path) -> None:
    runtime = SelfHostedRuntime(SelfHostedConfig(api_keys=["k"], model_url=None, usage_spool_dir=tmp_path),
                                catalog_factory=Catalog.load)
    with TestClient(create_selfhosted_app(runtime.config, runtime=runtime)) as client:
        assert client.post("/", json={}).status_code == 401
