"""The public voice lists: the vendor's shapes from the catalog, rendered once per catalog."""

from __future__ import annotations

import dataclasses

from fastapi import FastAPI
from fastapi.testclient import TestClient

from facade.deps import Services, Speech
from facade.routes import voices
from speech.voices import Catalog, all_v2, voice_details


def _client(catalog: Catalog) -> TestClient:
    app = FastAPI()
    app.include_router(voices.router)
    app.state.services = Services(speech=Speech(catalog=catalog, synthesizer=None))  # type: ignore[arg-type]
    return TestClient(app)


def test_lists_are_the_catalogs_in_json() -> None:
    catalog = Catalog.load()
    client = _client(catalog)
    listed = client.get("/data/voices/all-v2.json")
    details = client.get("/data/voices/voice_details.json")
    assert listed.headers["content-type"] == "application/json"
    assert listed.json() == all_v2(catalog)
    assert details.json() == voice_details(catalog)


def test_each_catalog_gets_its_own_rendering() -> None:
    """The cache is keyed by the catalog: a second catalog (another app, another test) is never
    answered with the first one's bytes."""
    full = Catalog.load()
    joe_only = dataclasses.replace(full, voices=tuple(v for v in full.voices if v.speaker == "joe"))
    assert _client(full).get("/data/voices/all-v2.json").json() == all_v2(full)
    assert _client(joe_only).get("/data/voices/all-v2.json").json() == all_v2(joe_only)
    assert all_v2(joe_only) != all_v2(full)
