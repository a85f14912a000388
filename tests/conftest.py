"""Fixtures shared by every test room. Each service fixture lives in its own module under
``tests/fixtures`` and starts or connects to the *real* service (PostgreSQL, Redis, Swift s3api)."""

import pytest

pytest_plugins = [
    "tests.fixtures.postgres",
    "tests.fixtures.redis",
    "tests.fixtures.swift",
    "tests.fixtures.voice",
    "tests.fixtures.stack",
    "tests.fixtures.farm",
]


def pytest_configure(config: pytest.Config) -> None:
    """With another CPU family's kernels forced (``ATEN_CPU_CAPABILITY``, as the docs' figures
    for CPUs out of reach are taken), inductor's compiled chains get a cache of their own: its
    cache key leaves the capability out, and a chain compiled under the native kernels, loaded
    under ``avx2`` on an AVX-512 CPU, returned NaNs (``test_kernels.py``; torch 2.13.0)."""
    import getpass
    import os
    import tempfile

    capability = os.environ.get("ATEN_CPU_CAPABILITY")
    if capability and "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
        folder = f"torchinductor_{getpass.getuser()}_{capability}"
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tempfile.gettempdir(), folder)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files with a slow test run first, each file's tests still together and in order: xdist
    (``infra/test.sh``) hands whole files to its workers in this order, and a long file handed
    out last keeps one worker busy for minutes while the other has nothing left to do."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


@pytest.fixture(scope="module", autouse=True)
def _models_released_after_each_file():  # type: ignore[no-untyped-def]
    """A worker gives its cached models back after each file (``tests/support/memory.py``)."""
    yield
    from tests.support.memory import release_models

    release_models()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """With ``LECTOR_TEST_TIMELINE=<dir>``, each process that runs tests writes when each test
    ended (wall clock, its xdist worker or its pid): how the suite's minutes fall on the workers
    and the farm's lane, which the durations table cannot show (``python -m
    tests.support.timeline <dir>`` sums it up). With it, the CPU seconds the process, its reaped
    children and its live descendants have used so far: a stack's servers count at the tests
    they served, not at the file that stopped them (a stack is a session's)."""
    import os
    import resource
    import time

    folder = os.environ.get("LECTOR_TEST_TIMELINE")
    if folder:
        import psutil  # only with a timeline: a plain run reads no process table per test

        worker = os.environ.get("PYTEST_XDIST_WORKER") or f"lane-{os.getpid()}"
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{worker}.log"), "a", encoding="utf-8") as log:
            own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
            for child in psutil.Process().children(recursive=True):
                try:
                    times = child.cpu_times()  # its own and its reaped children's
                except psutil.Error:  # gone meanwhile: its parent's figure has it once reaped
                    continue
                cpu += times.user + times.system + times.children_user + times.children_system
            log.write(f"{time.time():.2f} {cpu:.2f} {item.nodeid}\n")
