"""Per-language routing of arcana requests, MODEL_URL for everything else."""

from __future__ import annotations

import pytest

from facade.model_routes import ModelRoutes
from facade.remote_engine import ModelUnavailable, service_url

ROUTES = ModelRoutes.build("http://default/invocations", eng="http://eng/invocations", ger="http://ger/invocations")


@pytest.mark.parametrize(
    "model, lang, expected",
    [
        ("arcana", "en", "http://eng/invocations"),
        ("arcana", "eng", "http://eng/invocations"),
        ("arcana", "en-US", "http://eng/invocations"),
        ("arcana", "de", "http://ger/invocations"),
        ("arcana", "ger", "http://ger/invocations"),
        ("arcana", "deu", "http://ger/invocations"),
        ("arcana", "es", "http://default/invocations"),  # no Spanish container: the default
        ("arcana", None, "http://default/invocations"),
        ("mist", "de", "http://default/invocations"),
        ("mistv3", "en", "http://default/invocations"),
    ],
)
def test_routes(model: str, lang: str | None, expected: str) -> None:
    assert ROUTES.url_for(model, lang) == expected


def test_no_model_url_is_a_model_failure_not_a_crash() -> None:
    with pytest.raises(ModelUnavailable):
        ModelRoutes.build(None).url_for("mist", "en")


def test_urls_lists_each_service_once() -> None:
    routes = ModelRoutes.build("http://a/invocations", eng="http://a/invocations", spa="http://b/invocations")
    assert routes.urls() == ["http://a/invocations", "http://b/invocations"]


def test_service_url() -> None:
    assert service_url("http://h:8080/invocations", "readyz") == "http://h:8080/readyz"
    assert service_url("http://h:8080/invocations/", "/livez") == "http://h:8080/livez"
