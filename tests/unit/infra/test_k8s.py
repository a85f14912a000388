"""Kubernetes manifests, validated offline against the API schemas (``kubernetes-validate``)
and checked for what the vendor API contract asks of a self-hosted pair."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
K8S = ROOT / "infra" / "k8s"
KUBERNETES_VERSION = "1.30"


def _documents() -> list[dict[str, Any]]:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    docs = []
    for name in kustomization["resources"]:
        docs += [d for d in yaml.safe_load_all((K8S / name).read_text()) if d]
    return docs


DOCS = _documents()
DEPLOYMENTS = [d for d in DOCS if d["kind"] == "Deployment"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_each_manifest_is_valid(doc: dict[str, Any]) -> None:
    kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_the_validator_does_catch_mistakes() -> None:
    broken = copy.deepcopy(DEPLOYMENTS[0])
    broken["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["pathh"] = "/health"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)


def test_every_kustomization_resource_and_image_is_used() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"} == set(kustomization["resources"])
    used = {c["image"] for d in DEPLOYMENTS for key in ("containers", "initContainers")
            for c in d["spec"]["template"]["spec"].get(key, [])}
    assert used == {i["name"] for i in kustomization["images"]}


def _containers(deployment: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    api = next(c for c in containers if c["args"][0] == "serve")
    return api, [c for c in containers if c["args"][0] == "model-server"]


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


@pytest.mark.parametrize("deployment", DEPLOYMENTS, ids=lambda d: d["metadata"]["name"])
def test_a_pair_is_an_api_with_model_sidecars_on_loopback(deployment: dict[str, Any]) -> None:
    api, models = _containers(deployment)
    assert models
    assert "--self-hosted" in api["args"]
    assert {p["containerPort"] for p in api["ports"]} == {8000, 8001}
    env = _env(api)
    model_ports = {int(m["args"][m["args"].index("--port") + 1]) for m in models}
    routed = {v for k, v in env.items() if k == "MODEL_URL" or (k.startswith("ARCANA_") and k.endswith("_MODEL_URL"))}
    assert env["MODEL_URL"].startswith("http://127.0.0.1:")
    assert routed == {f"http://127.0.0.1:{port}/invocations" for port in model_ports}
    assert env["LECTOR_API_KEYS"]["secretKeyRef"]["name"] == "lector-selfhosted"
    assert env["LECTOR_LICENSE"]["secretKeyRef"]["name"] == "lector-selfhosted"


@pytest.mark.parametrize("deployment", DEPLOYMENTS, ids=lambda d: d["metadata"]["name"])
def test_probes_gpus_and_warm_up(deployment: dict[str, Any]) -> None:
    api, models = _containers(deployment)
    assert api["readinessProbe"]["httpGet"]["path"] == "/health"
    assert api["livenessProbe"]["httpGet"]["path"] == "/health"
    for model in models:
        port = int(model["args"][model["args"].index("--port") + 1])
        assert model["resources"]["limits"]["nvidia.com/gpu"] == 1
        assert model["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port}
        assert model["livenessProbe"]["httpGet"] == {"path": "/livez", "port": port}
        startup = model["startupProbe"]
        assert startup["httpGet"]["path"] == "/readyz"
        assert startup["periodSeconds"] * startup["failureThreshold"] >= 300  # the vendor API contract's ~5 min
        assert model["args"][model["args"].index("--host") + 1] == "0.0.0.0"  # kubelet probes the pod IP


def test_services_expose_http_and_websocket_of_each_pair() -> None:
    services = {d["metadata"]["name"]: d for d in DOCS if d["kind"] == "Service"}
    for deployment in DEPLOYMENTS:
        service = services[deployment["metadata"]["name"]]
        assert {p["port"] for p in service["spec"]["ports"]} == {8000, 8001}
        assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
        assert 8080 not in {p["port"] for p in service["spec"]["ports"]}  # the model stays private


def test_usage_spool_is_persistent() -> None:
    claims = {d["metadata"]["name"] for d in DOCS if d["kind"] == "PersistentVolumeClaim"}
    for deployment in DEPLOYMENTS:
        spec = deployment["spec"]["template"]["spec"]
        api, _ = _containers(deployment)
        mount = next(m for m in api["volumeMounts"] if m["name"] == "usage-spool")
        volume = next(v for v in spec["volumes"] if v["name"] == "usage-spool")
        assert volume["persistentVolumeClaim"]["claimName"] in claims
        config = next(d for d in DOCS if d["kind"] == "ConfigMap")
        assert config["data"]["LECTOR_USAGE_SPOOL_DIR"] == mount["mountPath"]


CONTRACT_LANGUAGES = ("ar", "de", "en", "es", "fr", "hi")
DATE_TAG = re.compile(r"^\d{4}\.\d{2}\.\d{2}(\.\d+)?$")


def test_an_arcana_pair_per_contract_language_each_model_on_8080_in_its_own_pod() -> None:
    arcana = {d["metadata"]["name"]: d for d in DEPLOYMENTS if d["metadata"]["name"].startswith("lector-arcana-")}
    assert set(arcana) == {f"lector-arcana-{lang}" for lang in CONTRACT_LANGUAGES}
    for deployment in DEPLOYMENTS:
        _, models = _containers(deployment)
        assert len(models) == 1, deployment["metadata"]["name"]  # one model container per pod
        assert models[0]["args"][models[0]["args"].index("--port") + 1] == "8080"
    for lang, name in ((lang, f"lector-arcana-{lang}") for lang in CONTRACT_LANGUAGES):
        spec = arcana[name]["spec"]["template"]["spec"]
        _, (model,) = _containers(arcana[name])
        assert model["image"] == "lector-engine-arcana"
        (package,) = spec["initContainers"]
        assert package["image"] == f"lector-package-arcana-{lang}"
        shared = {m["name"] for m in package["volumeMounts"]} & {m["name"] for m in model["volumeMounts"]}
        assert shared == {"package"}
        # mounted where the engine image looks for the package's weights (PYTHONPATH, infra/docker/Dockerfile)
        assert {m["mountPath"] for m in model["volumeMounts"] if m["name"] == "package"} == {"/package"}
        assert _env(model)["LECTOR_MODEL_VOICE_FILE"] == "/package/speakers"
        assert {"name": "lector-registry"} in spec["imagePullSecrets"]


def test_images_follow_the_contract_s_paths_with_date_like_tags() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    images = {i["name"]: i for i in kustomization["images"]}
    assert images["lector-api"]["newName"].endswith("/api/service")
    assert images["lector-engine-arcana"]["newName"].endswith("/engine/arcana")
    assert images["lector-model-mist-en"]["newName"].endswith("/mist/v2/en")
    for lang in CONTRACT_LANGUAGES:
        assert images[f"lector-package-arcana-{lang}"]["newName"].endswith(f"/package/arcana/{lang}")
    for image in images.values():
        assert DATE_TAG.match(image["newTag"]), image
