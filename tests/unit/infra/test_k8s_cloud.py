"""The cloud stack on Kubernetes (``infra/k8s/cloud``), checked offline: valid against the API
schemas, the same roles and arguments as ``docker-compose.yml``, the API's liveness and readiness
on ``/livez`` and ``/readyz``, the model service ready only after its warm-up, GPUs where compose
reserves them, every secret from the operator's Secret, and each API replica's usage outbox on a
persistent volume of its own."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from lector.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
CLOUD = ROOT / "infra" / "k8s" / "cloud"
KUBERNETES_VERSION = "1.30"
# compose's cloud roles -> their workload here (PostgreSQL, Redis and MinIO are managed services)
ROLES = {"api": "lector-api", "model-server": "lector-model-server", "worker-gpu": "lector-worker-gpu",
         "worker-cpu": "lector-worker-cpu", "worker-live": "lector-worker-live", "beat": "lector-beat"}
# The API is a StatefulSet (a volume per replica for its usage outbox); the other roles keep no state.
KINDS = {name: "StatefulSet" if name == "lector-api" else "Deployment" for name in ROLES.values()}


def _documents() -> list[dict[str, Any]]:
    kustomization = yaml.safe_load((CLOUD / "kustomization.yaml").read_text())
    return [d for name in kustomization["resources"] for d in yaml.safe_load_all((CLOUD / name).read_text()) if d]


DOCS = _documents()
BY_NAME = {(d["kind"], d["metadata"]["name"]): d for d in DOCS}


def _container(kind: str, name: str) -> dict[str, Any]:
    (container,) = BY_NAME[(kind, name)]["spec"]["template"]["spec"]["containers"]
    return container  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())  # type: ignore[no-any-return]


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_each_manifest_is_valid(doc: dict[str, Any]) -> None:
    kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_the_roles_are_compose_s_with_the_same_arguments(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for role, deployment in ROLES.items():
        args = _container(KINDS[deployment], deployment)["args"]
        expected = [a for a in services[role]["command"] if a != "--per-gpu"]  # here: one GPU per pod
        assert [a for a in args if a not in ("--metrics-port", "9200")] == expected, role
    assert _container("Job", "lector-migrate")["args"] == services["migrate"]["command"]
    workloads = {(kind, name) for kind, name in BY_NAME if kind in ("Deployment", "StatefulSet", "Job")}
    assert workloads == {*((kind, name) for name, kind in KINDS.items()), ("Job", "lector-migrate")}


def test_the_api_is_alive_on_livez_and_ready_on_readyz() -> None:
    api = _container("StatefulSet", "lector-api")
    port = {p["name"]: p["containerPort"] for p in api["ports"]}["http"]
    assert api["args"][api["args"].index("--port") + 1] == str(port)
    assert api["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"  # PostgreSQL, Redis and the object store
    service = BY_NAME[("Service", "lector-api")]
    assert service["spec"]["selector"] == BY_NAME[("StatefulSet", "lector-api")]["spec"]["selector"]["matchLabels"]
    assert {p["targetPort"] for p in service["spec"]["ports"]} == {"http"}


def test_the_model_service_is_ready_after_warm_up_and_the_api_uses_it() -> None:
    model = _container("Deployment", "lector-model-server")
    assert model["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert model["livenessProbe"]["httpGet"]["path"] == "/livez"
    startup = model["startupProbe"]
    assert startup["httpGet"]["path"] == "/readyz" and startup["periodSeconds"] * startup["failureThreshold"] >= 300
    api_env = {e["name"]: e.get("value") for e in _container("StatefulSet", "lector-api")["env"]}
    assert api_env["MODEL_URL"] == "http://lector-model-server:8080/invocations"
    for worker in ("lector-worker-gpu", "lector-worker-cpu", "lector-worker-live"):  # workers synthesize in process, as in compose
        assert "MODEL_URL" not in {e["name"] for e in _container("Deployment", worker)["env"]}
    config = BY_NAME[("ConfigMap", "lector-cloud")]
    assert "MODEL_URL" not in config["data"]


def test_gpus_where_compose_reserves_them(compose: dict[str, Any]) -> None:
    for role, deployment in ROLES.items():
        reserves = "deploy" in compose["services"][role]
        limits = _container(KINDS[deployment], deployment)["resources"]["limits"]
        assert (limits.get("nvidia.com/gpu") == 1) == reserves, role


def test_secrets_come_from_the_operator_s_secret_and_one_beat_runs() -> None:
    secrets = {"LECTOR_DATABASE_URL", "LECTOR_REDIS_URL", "LECTOR_S3_ACCESS_KEY_ID", "LECTOR_S3_SECRET_ACCESS_KEY",
               "LECTOR_ADMIN_TOKEN"}
    config = BY_NAME[("ConfigMap", "lector-cloud")]["data"]
    assert config["LECTOR_ENV"] == "prod" and not secrets & set(config)
    for kind, name in [(KINDS[d], d) for d in ROLES.values()] + [("Job", "lector-migrate")]:
        env = {e["name"]: e for e in _container(kind, name)["env"]}
        for variable in secrets:
            assert env[variable]["valueFrom"]["secretKeyRef"]["name"] == "lector-cloud", (name, variable)
    beat = BY_NAME[("Deployment", "lector-beat")]["spec"]
    assert beat["replicas"] == 1 and beat["strategy"]["type"] == "Recreate"


def test_the_image_has_a_date_like_tag() -> None:
    kustomization = yaml.safe_load((CLOUD / "kustomization.yaml").read_text())
    (image,) = kustomization["images"]
    assert image["name"] == "lector" and re.fullmatch(r"\d{4}\.\d{2}\.\d{2}(\.\d+)?", image["newTag"])
    assert image["newName"].endswith("/lector")  # what `make images` builds as {registry}/lector:<tag>
    used = {c["image"] for d in DOCS if d["kind"] in ("Deployment", "StatefulSet", "Job")
            for c in d["spec"]["template"]["spec"]["containers"]}
    assert used == {"lector"}


def _under(path: Path, mount: str) -> bool:
    return path == Path(mount) or Path(mount) in path.parents


def test_each_api_replica_keeps_its_usage_outbox_on_a_volume_of_its_own() -> None:
    """Usage rows spooled while PostgreSQL is down must survive the pod: the outbox's folder (where
    ``lector serve`` puts it, from the pod's own settings) lies on a mount of a volumeClaimTemplate,
    so every replica gets its own claim back when it is restarted or rescheduled."""
    api = BY_NAME[("StatefulSet", "lector-api")]
    container = _container("StatefulSet", "lector-api")
    config = BY_NAME[("ConfigMap", "lector-cloud")]["data"]
    env = {**config, **{e["name"]: e["value"] for e in container["env"] if "value" in e}}
    port = int(container["args"][container["args"].index("--port") + 1])
    outbox = Settings(data_dir=Path(env["LECTOR_DATA_DIR"]), port=port).usage_outbox_dir
    claims = {t["metadata"]["name"] for t in api["spec"]["volumeClaimTemplates"]}
    mounts = [m for m in container.get("volumeMounts", []) if _under(outbox, m["mountPath"])]
    assert mounts and all(m["name"] in claims for m in mounts), outbox
    assert not api["spec"]["template"]["spec"].get("volumes")  # no emptyDir or hostPath in front of it
    assert api["spec"]["persistentVolumeClaimRetentionPolicy"]["whenScaled"] == "Retain"  # a scaled-down replica's rows stay
    governing = BY_NAME[("Service", api["spec"]["serviceName"])]
    assert governing["spec"]["clusterIP"] == "None"
