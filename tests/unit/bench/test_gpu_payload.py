"""``bench.gpu_payload``: the wheel list is the runtime requirement closure (markers evaluated for
the GPU host, extras followed only where asked), and the payload's folders each fit one call.

The hand-made list missed packages the service imports at start; the closure of the installed
``lector`` must hold them, and must not drag the test tools in."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import gpu_payload
from bench.gpu_payload import HOST_ENVIRONMENT, closure, installed_requires, pack, parse_names, wanted

FAKE = {
    "app": ["web[fast]>=1", "Old_Lib; python_version < '3.12'", "pytest>=8; extra == 'test'",
            "winonly; sys_platform == 'win32'", "db"],
    "web": ["core", "speedups; extra == 'fast'", "docs-tool; extra == 'docs'"],
    "core": [],
    "speedups": ["core"],
    "db": ["missing-driver"],
}


def _requires(name: str) -> list[str] | None:
    return FAKE.get(name)


def test_markers_are_read_for_the_host_and_unasked_extras_are_skipped() -> None:
    assert wanted("x; extra == 'test'", (), HOST_ENVIRONMENT) is None
    assert wanted("x; extra == 'test'", {"test"}, HOST_ENVIRONMENT) is not None
    assert wanted("x; python_version >= '3.12' and platform_machine == 'x86_64'", (), HOST_ENVIRONMENT) is not None
    assert wanted("x; python_version < '3.12'", (), HOST_ENVIRONMENT) is None
    assert wanted("x; sys_platform == 'darwin'", (), HOST_ENVIRONMENT) is None


def test_the_closure_follows_asked_extras_and_names_the_missing() -> None:
    walked = closure("app", _requires)
    assert set(walked.extras) == {"app", "web", "core", "speedups", "db", "missing-driver"}
    assert walked.extras["web"] == {"fast"}
    assert walked.missing == {"missing-driver"}


def test_a_pruned_package_is_not_walked() -> None:
    walked = closure("app", _requires, prune=lambda name: name == "web")
    assert set(walked.extras) == {"app", "db", "missing-driver"}


def test_names_are_normalised_whatever_separates_them() -> None:
    assert parse_names("Foo_Bar, baz.qux\nzipp.") == {"foo-bar", "baz-qux", "zipp"}


def test_the_image_list_is_read_after_packages(tmp_path: Path) -> None:
    notes = tmp_path / "KINDS.md"
    notes.write_text("# kinds\nsome words, here\n\nIt holds these. Packages: numpy, Typer, zipp.\n\n## more\n")
    assert gpu_payload.image_packages(notes) == {"numpy", "typer", "zipp"}
    assert gpu_payload.image_packages(tmp_path / "absent.md") == set()


def test_every_file_is_placed_and_no_folder_is_over_the_cap() -> None:
    sizes = {f"f{n}": size for n, size in enumerate([50, 40, 30, 30, 20, 10, 10, 5, 5, 60])}
    folders = pack(sizes, cap=60)
    placed = [name for folder in folders for name in folder]
    assert sorted(placed) == sorted(sizes)
    assert all(sum(sizes[name] for name in folder) <= 60 for folder in folders)
    assert len(folders) == 5  # 260 bytes: at least five folders of 60


def test_a_file_over_the_cap_is_an_error_that_names_it() -> None:
    with pytest.raises(ValueError, match=r"larger than the cap of 100 bytes.*model\.xz\.aa"):
        pack({"model.xz.aa": 101, "small.whl": 10}, cap=100)


def test_the_calls_copy_each_folder_and_the_last_runs_the_bench() -> None:
    made = gpu_payload.calls([Path(".gpu/s1"), Path(".gpu/s2")])
    assert [carry for carry, _ in made] == [".gpu/s1", ".gpu/s2"]
    assert made[0][1] == "mkdir -p /root/gpu-stage && cp .gpu/s1/* /root/gpu-stage/"
    assert made[1][1].endswith("cp .gpu/s2/* /root/gpu-stage/ && OUT=$OUT bash bench/gpu_first_byte.sh")


def test_the_installed_closure_holds_what_the_service_imports_and_no_dev_tools() -> None:
    names = set(closure("lector", installed_requires).extras)
    assert {"fasteners", "platformdirs", "opentelemetry-api", "importlib-metadata", "importlib-resources"} <= names
    assert "psycopg-binary" in names  # asked as psycopg[binary]: without it psycopg needs the host's libpq
    assert not {"pytest", "ruff", "mypy"} & names
