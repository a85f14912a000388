"""``lector run``'s process list: one synth worker per GPU, each pinned to its own device, and
every queue taken by exactly one worker (the live playlist's by one of its own)."""

from __future__ import annotations

import pytest

from lector.settings import Settings
from lector.supervisor import commands, gpu_count


def test_without_a_gpu_one_cpu_synth_worker() -> None:
    procs = commands(Settings(), 0)
    assert set(procs) == {"api", "worker-synth", "worker-cpu", "worker-live"}
    argv, env = procs["worker-synth"]
    assert argv[argv.index("--pool") + 1] == "solo" and env == {}


@pytest.mark.parametrize("gpus", [0, 2])
def test_every_queue_is_taken_and_the_live_playlist_by_a_worker_of_its_own(gpus: int) -> None:
    from scheduler.queue import QUEUE_LIVE, QUEUES

    taken = {
        name: argv[argv.index("--queues") + 1].split(",")
        for name, (argv, _) in commands(Settings(), gpus).items() if "--queues" in argv
    }
    assert {q for queues in taken.values() for q in queues} == set(QUEUES)
    assert [name for name, queues in taken.items() if QUEUE_LIVE in queues] == ["worker-live"]
    assert taken["worker-live"] == [QUEUE_LIVE]


@pytest.mark.parametrize("gpus", [1, 4])
def test_one_solo_worker_per_gpu_each_seeing_its_device(gpus: int) -> None:
    procs = commands(Settings(), gpus)
    synth = {name: spec for name, spec in procs.items() if name.startswith("worker-synth")}
    assert len(synth) == gpus
    devices = sorted(env["CUDA_VISIBLE_DEVICES"] for _, env in synth.values())
    assert devices == [str(i) for i in range(gpus)]
    for argv, env in synth.values():
        assert env["LECTOR_DEVICE"] == "cuda"
        assert argv[argv.index("--queues") + 1] == "synth" and argv[argv.index("--pool") + 1] == "solo"
    names = [argv[argv.index("--name") + 1] for argv, _ in synth.values()]
    assert len(set(names)) == gpus  # distinct Celery hostnames


def test_cpu_setting_means_no_gpu_workers() -> None:
    assert gpu_count(Settings(device="cpu")) == 0


def test_per_gpu_worker_children_drop_the_flag_and_name_each_device() -> None:
    from lector.supervisor import per_gpu_children

    argv = ["lector", "worker", "--queues", "synth", "--pool", "solo", "--name", "gpu", "--per-gpu"]
    children = per_gpu_children(argv, "gpu", 2)
    assert [c[0] for c in children] == [
        ["lector", "worker", "--queues", "synth", "--pool", "solo", "--name", "gpu-gpu0"],
        ["lector", "worker", "--queues", "synth", "--pool", "solo", "--name", "gpu-gpu1"],
    ]
    assert [c[1]["CUDA_VISIBLE_DEVICES"] for c in children] == ["0", "1"]


def test_per_gpu_children_serve_metrics_on_their_own_ports() -> None:
    from lector.supervisor import per_gpu_children

    argv = ["lector", "worker", "--queues", "synth", "--metrics-port", "9200", "--per-gpu"]
    ports = [c[0][c[0].index("--metrics-port") + 1] for c in per_gpu_children(argv, "gpu", 3)]
    assert ports == ["9200", "9201", "9202"]
