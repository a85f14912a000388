"""Per-language routing of arcana requests to their own model services, checked at the services."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from speech.engines.base import Engine
from tests.integration.selfhosted.conftest import Api, model_service


def _items(url: str) -> int:
    return int(httpx.get(url + "/stats").json().get("items", 0))


def test_arcana_goes_by_language_and_everything_else_to_model_url(
    start_api: Callable[..., Api], joe_engine: Engine, mateo_engine: Engine
) -> None:
    default = model_service(joe_engine, "joe")
    english = model_service(joe_engine, "joe")
    spanish = model_service(mateo_engine, "mateo")
    services = {"default": default, "eng": english, "spa": spanish}
    try:
        api = start_api(
            model_url=default.url + "/invocations",
            arcana_urls={"en": english.url + "/invocations", "es": spanish.url + "/invocations"},
        )
        cases = [
            ({"speaker": "joe", "modelId": "mist", "lang": "en"}, "default"),
            ({"speaker": "joe", "modelId": "arcana", "lang": "en"}, "eng"),
            ({"speaker": "joe", "modelId": "arcana", "lang": "eng"}, "eng"),
            ({"speaker": "mateo", "modelId": "arcana", "lang": "es"}, "spa"),
            ({"speaker": "mateo", "modelId": "arcana", "lang": "spa"}, "spa"),
            ({"speaker": "mateo", "modelId": "mistv3", "lang": "es"}, "default"),  # not arcana
        ]
        for body, expected in cases:
            before = {name: _items(s.url) for name, s in services.items()}
            response = api.post({"text": "Hola. Hello.", **body}, accept="audio/pcm")
            after = {name: _items(s.url) for name, s in services.items()}
            got = {name for name in services if after[name] > before[name]}
            if expected == "default" and body["speaker"] == "mateo":
                # the default container serves joe only: it refuses mateo rather than substitute,
                # and the API says so with a 400 (a retry cannot help)
                assert response.status_code == 400 and "mateo is not served" in response.text and got == set()
                continue
            assert response.status_code == 200, (body, response.text)
            assert got == {expected}, body
        assert api.health()["modelReachable"] is True
        spanish.stop()
        assert api.health()["modelReachable"] is False  # every configured service counts
    finally:
        for server in services.values():
            server.close()
