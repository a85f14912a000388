#!/usr/bin/env bash
# Installs the Debian packages named as arguments (infra/apt-install.sh: the S3 server;
# infra/browser/install.sh: Chromium for the console's browser tests).
# Idempotent and fast when everything is there: `make test` calls it on every run, CI on a fresh
# machine (as root). `apt-get update` runs only when a package is missing and the package lists
# are absent or cannot provide it, so a warm machine never touches the network.
set -euo pipefail

PACKAGES=("$@")

missing=()
for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=(sudo -n); else
        echo "infra/apt-install.sh: missing ${missing[*]} and not root (no sudo)" >&2; exit 1
    fi
else
    SUDO=()
fi

export DEBIAN_FRONTEND=noninteractive
# Update the lists only if apt does not know a candidate for every missing package yet.
needs_update=0
for pkg in "${missing[@]}"; do
    candidate=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ {print $2}')
    if [[ -z "$candidate" || "$candidate" == "(none)" ]]; then needs_update=1; break; fi
done
if [[ $needs_update -eq 1 ]]; then
    "${SUDO[@]}" apt-get update -qq
fi
echo "infra/apt-install.sh: installing ${missing[*]}" >&2
apt_install() { "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
# Stale lists name package versions the mirror no longer has: refresh once and try again.
if ! apt_install; then
    [[ $needs_update -eq 1 ]] && exit 1
    "${SUDO[@]}" apt-get update -qq
    apt_install
fi
