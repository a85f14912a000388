"""The farm overlay (``infra/k8s/farm``), checked offline: it builds on the cloud stack, every
process that sends or takes tasks gets the RabbitMQ broker from the operator's Secret, the GPU
workers run a pool that keeps answering heartbeats and have a grace period to drain, and KEDA
scales exactly those workers on the synth queue, down to zero."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import yaml

from scheduler.queue import QUEUE_SYNTH

ROOT = Path(__file__).resolve().parents[3]
FARM = ROOT / "infra" / "k8s" / "farm"
CLOUD = ROOT / "infra" / "k8s" / "cloud"
KUBERNETES_VERSION = "1.30"


def _load(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


KUSTOMIZATION = yaml.safe_load((FARM / "kustomization.yaml").read_text())
CLOUD_DOCS = {(d["kind"], d["metadata"]["name"]): d for d in _load(CLOUD / "cloud.yaml")}
PATCHES = {(d["kind"], d["metadata"]["name"]): d for p in KUSTOMIZATION["patches"] for d in _load(FARM / p["path"])}
SCALING = {d["kind"]: d for d in _load(FARM / "scaledobject.yaml")}


def _containers(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in doc["spec"]["template"]["spec"]["containers"]}


#: The kinds whose pods send or take tasks (the API is a StatefulSet: its usage outbox has a volume).
WORKLOADS = ("Deployment", "StatefulSet")


def _patched(name: str) -> dict[str, Any]:
    """The workload with its patch applied as a strategic merge does (containers by name; env
    merged by name; args replaced)."""
    (kind,) = [k for k in WORKLOADS if (k, name) in CLOUD_DOCS]
    merged = yaml.safe_load(yaml.safe_dump(CLOUD_DOCS[(kind, name)]))
    patch = PATCHES[(kind, name)]["spec"]["template"]["spec"]
    spec = merged["spec"]["template"]["spec"]
    for key, value in patch.items():
        if key != "containers":
            spec[key] = value
    for container in patch["containers"]:
        target = _containers(merged)[container["name"]]
        if "args" in container:
            target["args"] = container["args"]
        env = {e["name"]: e for e in target.get("env", [])}
        env.update({e["name"]: e for e in container.get("env", [])})
        target["env"] = list(env.values())
    return merged


def test_it_builds_on_the_cloud_stack() -> None:
    assert "../cloud" in KUSTOMIZATION["resources"] and "scaledobject.yaml" in KUSTOMIZATION["resources"]


def test_every_task_sender_and_worker_uses_the_broker_from_the_secret() -> None:
    users = {name for kind, name in CLOUD_DOCS if kind in WORKLOADS and name != "lector-model-server"}
    assert {name for _, name in PATCHES} == users
    assert set(PATCHES) <= set(CLOUD_DOCS)  # each patch names its target's kind: kustomize matches on it
    for name in users:
        patched = _patched(name)
        kubernetes_validate.validate(patched, KUBERNETES_VERSION, strict=True)
        (container,) = _containers(patched).values()
        env = {e["name"]: e for e in container["env"]}
        assert env["LECTOR_BROKER_URL"]["valueFrom"]["secretKeyRef"] == {"name": "lector-cloud", "key": "broker-url"}


def test_gpu_workers_keep_heartbeats_and_drain_on_sigterm() -> None:
    before = _containers(CLOUD_DOCS[("Deployment", "lector-worker-gpu")])["worker"]["args"]
    patched = _patched("lector-worker-gpu")
    args = _containers(patched)["worker"]["args"]
    assert args[args.index("--pool") + 1] == "threads"
    assert [a for a in args if a != "threads"] == [a for a in before if a != "solo"]  # only the pool changed
    assert patched["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] >= 60


def test_keda_scales_the_gpu_workers_on_the_synth_queue_down_to_zero() -> None:
    scaled, auth = SCALING["ScaledObject"], SCALING["TriggerAuthentication"]
    assert scaled["apiVersion"] == auth["apiVersion"] == "keda.sh/v1alpha1"
    spec = scaled["spec"]
    assert ("Deployment", spec["scaleTargetRef"]["name"]) in CLOUD_DOCS
    assert spec["scaleTargetRef"]["name"] == "lector-worker-gpu"
    assert spec["minReplicaCount"] == 0 < spec["maxReplicaCount"]
    (trigger,) = spec["triggers"]
    assert trigger["type"] == "rabbitmq"
    assert trigger["metadata"]["queueName"] == QUEUE_SYNTH
    assert trigger["metadata"]["mode"] == "QueueLength" and int(trigger["metadata"]["value"]) > 0
    assert trigger["metadata"]["protocol"] == "http"  # counts the unacknowledged messages too
    assert trigger["authenticationRef"]["name"] == auth["metadata"]["name"]
    (ref,) = auth["spec"]["secretTargetRef"]
    assert ref["name"] == "lector-cloud" and ref["parameter"] == "host"
