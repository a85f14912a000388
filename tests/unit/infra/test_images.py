"""The self-hosted images: each arcana language package names the catalog's arcana voices of its
language, the model service reads a package's voice file, and one command builds every image
under the seed's paths with one date-like tag.

Docker cannot run on the development machines, so ``infra/build-images.sh`` is driven with a
stand-in ``docker`` that records its arguments (a third party that cannot run here)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from lector.commands.model_server import find_voices, package_voices
from speech.voices import Catalog

ROOT = Path(__file__).resolve().parents[3]
SEED_LANGUAGES = ("ar", "de", "en", "es", "fr", "hi")


@pytest.mark.parametrize("lang", SEED_LANGUAGES)
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
    return subprocess.run(["bash", str(ROOT / "infra" / "build-images.sh")], capture_output=True, text=True,
                          env={**os.environ, "DOCKER": str(fake), **env}, timeout=60)


def test_one_command_builds_every_image_with_one_date_like_tag(tmp_path: Path) -> None:
    result = _build(tmp_path, REGISTRY="registry.example.com/acme", PUSH="1")
    assert result.returncode == 0, result.stderr
    images = result.stdout.split()
    tags = {image.rsplit(":", 1)[1] for image in images}
    assert len(tags) == 1 and re.fullmatch(r"\d{4}\.\d{2}\.\d{2}", tags.pop())
    names = {image.rsplit(":", 1)[0].removeprefix("registry.example.com/acme/") for image in images}
    assert names == {"api/service", "engine/arcana", "mist/v2/en",
                     *(f"package/arcana/{lang}" for lang in SEED_LANGUAGES),
                     *(f"arcana/v2/{lang}" for lang in SEED_LANGUAGES)}
    calls = (tmp_path / "docker.log").read_text().splitlines()
    assert sum(c.startswith("build ") for c in calls) == len(images)
    assert sorted(c.split()[1] for c in calls if c.startswith("push ")) == sorted(images)
    package_es = next(c for c in calls if "package/arcana/es:" in c and c.startswith("build "))
    assert "LANGUAGE=es" in package_es and "Dockerfile.package" in package_es


def test_a_tag_that_is_not_date_like_is_refused(tmp_path: Path) -> None:
    result = _build(tmp_path, TAG="latest")
    assert result.returncode == 2 and "date-like" in result.stderr
    assert not (tmp_path / "docker.log").exists()
