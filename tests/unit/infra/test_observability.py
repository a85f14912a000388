"""Offline checks of what operators run lector with: compose probes (this file grows with the
dashboard and alert rules)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from facade.routes import health

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())  # type: ignore[no-any-return]


def test_cloud_api_health_is_its_readyz(compose: dict[str, Any]) -> None:
    check = " ".join(compose["services"]["api"]["healthcheck"]["test"])
    assert "http://127.0.0.1:8000/readyz" in check
    # the route the probe names exists on the app
    assert {"/readyz", "/livez"} <= {route.path for route in health.router.routes}  # type: ignore[attr-defined]
