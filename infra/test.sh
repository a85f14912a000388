#!/usr/bin/env bash
# Runs the whole suite. pytest's exit code 5 ("no tests collected") is a failure here, not a pass.
set -uo pipefail
cd "$(dirname "$0")/.."
.venv/bin/lint-imports || exit 1
.venv/bin/mypy || exit 1  # the rooms [tool.mypy] names, strict
# Two workers per machine up to four: most of the suite waits on real services and subprocesses,
# so two workers keep both cores busy on a 2-vCPU machine. Each worker has its own database,
# Redis database, S3 node and stack (tests/fixtures); a file's tests stay on one worker, so a
# module's lector is started once. LECTOR_TEST_WORKERS=0 runs in one process.
cores=$(nproc)
workers=${LECTOR_TEST_WORKERS:-$(( cores < 4 ? 2 : 4 ))}
dist=()
if [ "$workers" -gt 0 ]; then dist=(-n "$workers" --dist loadfile); fi
.venv/bin/python -m pytest -q -ra --durations=25 "${dist[@]}" "$@"
rc=$?
if [ "$rc" -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi
exit "$rc"
