"""The assembly pool: a kept forkserver pool of processes; a single worker is a thread."""

from __future__ import annotations

import os

import pytest

from books import parallel


def test_a_single_worker_is_a_thread_more_are_processes() -> None:
    assert not parallel.uses_processes(1)
    assert parallel.uses_processes(2)
    assert parallel.uses_processes(16)


def test_default_workers_keep_to_the_cgroup_cpu_quota(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cores = len(os.sched_getaffinity(0))
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text("max 100000\n")
    assert parallel.default_workers(cpu_max) == cores
    cpu_max.write_text("150000 100000\n")  # a limit of 1.5 CPUs: two workers, if there are two cores
    assert parallel.default_workers(cpu_max) == min(cores, 2)
    cpu_max.write_text("50000 100000\n")
    assert parallel.default_workers(cpu_max) == 1
    assert parallel.default_workers(tmp_path / "absent") == cores


def test_process_workers_run_elsewhere_and_the_pool_is_kept() -> None:
    with parallel.executor(3) as pool:
        pids = {f.result() for f in [pool.submit(os.getpid) for _ in range(6)]}
    assert pids and os.getpid() not in pids
    with parallel.executor(3) as again:  # leaving the block did not stop it: the same processes
        assert again._pool is pool._pool  # type: ignore[attr-defined]  # noqa: SLF001
        assert again.submit(pow, 2, 10).result() == 1024


def test_thread_workers_run_in_this_process() -> None:
    with parallel.executor(1) as pool:
        assert pool.submit(os.getpid).result() == os.getpid()


def test_a_dead_worker_breaks_the_pool_and_discard_gives_a_new_one() -> None:
    parallel.warm(3)
    pool = parallel.executor(3)
    with pytest.raises(parallel.BrokenProcessPool):
        pool.submit(os._exit, 9).result()
    parallel.discard(3)
    assert parallel.executor(3).submit(pow, 3, 3).result() == 27
