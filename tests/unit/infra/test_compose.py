"""docker-compose.yml, checked offline (Docker cannot run here): the cloud stack and the self-hosted profile's pairs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from lector.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
CONTRACT_LANGUAGES = ("ar", "de", "en", "es", "fr", "hi")
SELFHOSTED_APIS = {"selfhosted-api": "model", "arcana-api": "arcana-en",
                   **{f"arcana-{lang}-api": f"arcana-{lang}" for lang in CONTRACT_LANGUAGES}}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())  # type: ignore[no-any-return]


def _profiled(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: svc for name, svc in compose["services"].items() if "selfhosted" in svc.get("profiles", [])}


def _port(spec: str) -> int:
    """The container port of "host:container" (host side may be "${VAR:-8000}")."""
    return int(spec.rsplit(":", 1)[1])


def test_the_profile_holds_api_and_model_pairs(compose: dict[str, Any]) -> None:
    services = _profiled(compose)
    assert set(SELFHOSTED_APIS) | set(SELFHOSTED_APIS.values()) <= set(services)
    for name, svc in services.items():
        assert svc["profiles"] == ["selfhosted"], name
    # the cloud stack is untouched by the profile: its services carry no profile
    for name in ("api", "worker-gpu", "postgres", "redis"):
        assert "profiles" not in compose["services"][name]


def test_apis_point_at_their_model_by_service_name(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for api, model in SELFHOSTED_APIS.items():
        env = services[api]["environment"]
        assert env["MODEL_URL"] == f"http://{model}:8080/invocations"
        assert services[api]["command"][:2] == ["serve", "--self-hosted"]
        assert sorted(_port(p) for p in services[api]["ports"]) == [8000, 8001]
        assert model in services[api]["depends_on"]
        for key in ("LECTOR_API_KEYS", "LECTOR_LICENSE", "LECTOR_LICENSE_PUBLIC_KEY", "LECTOR_USAGE_URL"):
            assert key in env, (api, key)
        # nothing of the cloud stack: no database, Redis or object store
        assert not {"postgres", "redis", "minio"} & set(services[api]["depends_on"])
        assert not any(k.startswith(("LECTOR_DATABASE", "LECTOR_REDIS", "LECTOR_S3")) for k in env)
    arcana = services["arcana-api"]["environment"]
    assert arcana["ARCANA_SPA_MODEL_URL"] == "http://arcana-es:8080/invocations"
    assert arcana["ARCANA_ENG_MODEL_URL"] == "http://arcana-en:8080/invocations"
    assert arcana["ARCANA_FRA_MODEL_URL"] == "http://arcana-fr:8080/invocations"
    assert arcana["ARCANA_GER_MODEL_URL"] == "http://arcana-de:8080/invocations"


def test_model_services_reserve_every_gpu_and_wait_for_warm_up(compose: dict[str, Any]) -> None:
    models = {name: svc for name, svc in _profiled(compose).items() if svc.get("command", [""])[0] == "model-server"}
    assert set(models) == {"model", *(f"arcana-{lang}" for lang in CONTRACT_LANGUAGES)}
    for name, svc in models.items():
        devices = svc["deploy"]["resources"]["reservations"]["devices"]
        assert devices == [{"driver": "nvidia", "count": "all", "capabilities": ["gpu"]}], name
        assert "--port" in svc["command"] and svc["command"][svc["command"].index("--port") + 1] == "8080"
        assert svc["environment"]["LECTOR_DEVICE"] == "cuda"
        health = svc["healthcheck"]
        assert "/readyz" in " ".join(health["test"])
        assert int(health["start_period"].rstrip("s")) >= 300  # the vendor API contract's ~5 min warm-up


def test_host_ports_do_not_clash_between_pairs(compose: dict[str, Any]) -> None:
    host_ports: list[str] = []
    for svc in _profiled(compose).values():
        host_ports += [p.rsplit(":", 1)[0] for p in svc.get("ports", [])]
    assert len(host_ports) == len(set(host_ports))


def test_usage_spools_are_named_volumes(compose: dict[str, Any]) -> None:
    for api in SELFHOSTED_APIS:
        svc = compose["services"][api]
        volume = svc["volumes"][0].split(":")[0]
        assert volume in compose["volumes"]
        assert svc["environment"]["LECTOR_USAGE_SPOOL_DIR"] == svc["volumes"][0].split(":")[1]


def test_the_cloud_api_s_usage_outbox_is_on_a_named_volume(compose: dict[str, Any]) -> None:
    """Usage rows spooled while PostgreSQL is down must outlive the container: the folder where
    ``lector serve`` puts its outbox (from the service's own settings) lies on a named volume."""
    api = compose["services"]["api"]
    port = int(api["command"][api["command"].index("--port") + 1])
    outbox = Settings(data_dir=Path(api["environment"]["LECTOR_DATA_DIR"]), port=port).usage_outbox_dir
    volumes = [v.split(":") for v in api.get("volumes", [])]
    holding = [name for name, target, *_ in volumes if outbox == Path(target) or Path(target) in outbox.parents]
    assert holding and all(name in compose["volumes"] for name in holding), outbox


CLOUD_ROLES = {
    "migrate": ["migrate"],
    "api": ["serve"],
    "model-server": ["model-server"],
    "worker-gpu": ["worker", "--queues", "synth"],
    "worker-cpu": ["worker", "--queues", "cpu"],
    "worker-live": ["worker", "--queues", "live"],
    "beat": ["worker", "--queues", "cpu"],
}


def test_every_queue_has_a_worker_and_the_live_playlist_one_of_its_own(compose: dict[str, Any]) -> None:
    """A queue nobody takes is work nobody does; the live playlist's segments on the ``cpu``
    worker held a new job's plan up (``scheduler.queue.QUEUE_LIVE``)."""
    from scheduler.queue import QUEUE_LIVE, QUEUES

    taken = {
        name: svc["command"][svc["command"].index("--queues") + 1].split(",")
        for name, svc in compose["services"].items()
        if "profiles" not in svc and "--queues" in svc.get("command", [])
    }
    assert {q for queues in taken.values() for q in queues} == set(QUEUES)
    assert {name: queues for name, queues in taken.items() if QUEUE_LIVE in queues} == {"worker-live": [QUEUE_LIVE]}


def test_the_cloud_stack_has_every_role_on_one_image(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name, argv in CLOUD_ROLES.items():
        svc = services[name]
        assert "profiles" not in svc, name
        assert svc["command"][: len(argv)] == argv, name
        assert svc["image"] == "${LECTOR_IMAGE:-lector/lector:dev}", name
        assert svc["build"]["dockerfile"] == "infra/docker/Dockerfile", name
    assert "--beat" in services["beat"]["command"]
    assert services["worker-gpu"]["command"][services["worker-gpu"]["command"].index("--pool") + 1] == "solo"  # CUDA and fork
    for backing in ("postgres", "redis", "minio"):
        assert backing in services and "profiles" not in services[backing]
    assert services["api"]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}


def test_gpu_roles_reserve_every_gpu_and_the_api_uses_the_model_service(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in ("worker-gpu", "model-server"):
        devices = services[name]["deploy"]["resources"]["reservations"]["devices"]
        assert devices == [{"driver": "nvidia", "count": "all", "capabilities": ["gpu"]}], name
        assert services[name]["environment"]["LECTOR_DEVICE"] == "cuda"
    assert services["api"]["environment"]["MODEL_URL"] == "http://model-server:8080/invocations"
    assert "/readyz" in " ".join(services["model-server"]["healthcheck"]["test"])
    for name in ("api", "worker-gpu", "worker-cpu", "worker-live", "beat"):  # the shared settings reach every role
        env = services[name]["environment"]
        assert env["LECTOR_DATABASE_URL"].startswith("postgresql+psycopg://") and "@postgres:5432/" in env["LECTOR_DATABASE_URL"]
        assert env["LECTOR_REDIS_URL"] == "redis://redis:6379/0"
        assert env["LECTOR_S3_ENDPOINT_URL"] == "http://minio:9000"


def test_arcana_engine_and_language_packages_are_split_as_the_contract_names_them(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for lang in CONTRACT_LANGUAGES:
        model, package = services[f"arcana-{lang}"], services[f"arcana-{lang}-package"]
        assert model["image"] == "${LECTOR_REGISTRY:-lector}/engine/arcana:${LECTOR_TAG:-dev}"
        assert package["image"] == f"${{LECTOR_REGISTRY:-lector}}/package/arcana/{lang}:${{LECTOR_TAG:-dev}}"
        assert package["build"]["args"]["LANGUAGE"] == lang
        volume = f"arcana-{lang}-package"
        assert package["volumes"] == [f"{volume}:/mnt/package"] and volume in compose["volumes"]
        assert model["volumes"] == [f"{volume}:/package:ro"]
        assert model["depends_on"][f"arcana-{lang}-package"] == {"condition": "service_completed_successfully"}
        assert model["environment"]["LECTOR_MODEL_VOICE_FILE"] == "/package/speakers"
        # the engine is built without weights: the package brings them (tests/unit/infra/test_images.py)
        assert model["build"]["args"]["WEIGHTS"] == "package"
        assert model["build"]["dockerfile"] == "infra/docker/Dockerfile"
        assert (ROOT / "infra" / "packages" / "arcana" / lang / "speakers").is_file()
    assert "WEIGHTS" not in services["model"]["build"].get("args", {})  # mist keeps its weights inside
