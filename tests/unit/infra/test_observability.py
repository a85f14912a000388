"""Offline checks of what operators run lector with: the compose probe, the Prometheus alert
rules (with promtool's own checks and rule unit tests where Debian's `prometheus` package is
installed) and the Grafana dashboard, whose every query must name series lector exports."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import REGISTRY

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


OBS = ROOT / "infra" / "observability"
PROMTOOL = shutil.which("promtool")
METRIC = re.compile(r"\blector_[a-z_]+\b")


def exported_series() -> set[str]:
    """Every series name lector's processes export: the registered metrics of the API, the
    engines and the model service, and the API's scrape-time job collector."""
    import facade.billing_metric  # noqa: F401 - registers the characters-billed counter
    import facade.metrics
    import facade.model_service.metrics  # noqa: F401 - registers the batch-size histogram
    import lector.engine_metrics  # noqa: F401 - registers the engine metrics

    names = set(facade.metrics.COLLECTED_SERIES)
    suffixes = {"histogram": ("_bucket", "_sum", "_count"), "counter": ("_total",)}
    for family in REGISTRY.collect():  # labelled metrics have no samples before traffic: derive names
        names.add(family.name)
        names.update(family.name + suffix for suffix in suffixes.get(family.type, ()))
    return names


@pytest.fixture(scope="module")
def rules() -> dict[str, Any]:
    return yaml.safe_load((OBS / "prometheus" / "alerts.yml").read_text())  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    return json.loads((OBS / "grafana" / "lector.json").read_text())  # type: ignore[no-any-return]


def test_alert_rules_cover_what_on_call_needs(rules: dict[str, Any]) -> None:
    alerts = {rule["alert"]: rule for group in rules["groups"] for rule in group["rules"]}
    assert {"LectorHighErrorRate", "LectorSlowTimeToFirstByte", "LectorQueueBacklog", "LectorStalledJobs",
            "LectorWebhookFailures"} <= set(alerts)
    for name, rule in alerts.items():
        assert rule["labels"]["severity"] in ("page", "warn"), name
        assert rule["annotations"]["summary"] and rule["for"], name


def test_rules_and_dashboard_name_only_series_lector_exports(rules: dict[str, Any], dashboard: dict[str, Any]) -> None:
    exported = exported_series()
    expressions = [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    expressions += [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    used = {name for expr in expressions for name in METRIC.findall(expr)}
    assert used, "no lector series found in the expressions"
    assert used <= exported, f"unknown series: {sorted(used - exported)}"


def test_dashboard_is_well_formed(dashboard: dict[str, Any]) -> None:
    assert dashboard["uid"] and dashboard["title"] == "lector"
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids)) >= 10
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}"
        assert panel["targets"] and all(t["refId"] and t["expr"] for t in panel["targets"])
        assert {"h", "w", "x", "y"} <= panel["gridPos"].keys()
    assert [v["name"] for v in dashboard["templating"]["list"]] == ["datasource"]


@pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian: apt-get install prometheus)")
def test_promtool_checks_rules_config_and_rule_tests() -> None:
    assert PROMTOOL is not None
    for args in (["check", "rules", "alerts.yml"], ["check", "config", "prometheus.yml"],
                 ["test", "rules", "alerts.test.yml"]):
        result = subprocess.run([PROMTOOL, *args], cwd=OBS / "prometheus", capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian: apt-get install prometheus)")
def test_promtool_parses_every_dashboard_query(dashboard: dict[str, Any], tmp_path: Path) -> None:
    assert PROMTOOL is not None
    records = [{"record": f"lector:panel{panel['id']}:{target['refId']}", "expr": target["expr"]}
               for panel in dashboard["panels"] for target in panel["targets"]]
    path = tmp_path / "dashboard-queries.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": records}]}))
    result = subprocess.run([PROMTOOL, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
