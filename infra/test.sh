#!/usr/bin/env bash
# Runs the whole suite. pytest's exit code 5 ("no tests collected") is a failure here, not a pass.
set -uo pipefail
cd "$(dirname "$0")/.."
.venv/bin/lint-imports || exit 1
.venv/bin/mypy || exit 1  # the rooms [tool.mypy] names, strict
.venv/bin/python -m pytest -q -ra --durations=25 "$@"
rc=$?
if [ "$rc" -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi
exit "$rc"
