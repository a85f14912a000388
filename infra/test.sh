#!/usr/bin/env bash
# Runs the whole suite. pytest's exit code 5 ("no tests collected") is a failure here, not a pass.
set -uo pipefail
cd "$(dirname "$0")/.."
# The import contracts and mypy (strict, on the rooms [tool.mypy] names) run beside pytest, not
# before it: on two cores they fill the time the test workers spend waiting on services.
lint_log=$(mktemp)
( .venv/bin/lint-imports && .venv/bin/mypy ) >"$lint_log" 2>&1 &
lint_pid=$!
# Three workers on a machine of up to three cores, four above (and one per 10 GiB of memory): most of the suite waits on real
# services and subprocesses, and on 2 vCPUs two workers left a core idle for a fifth of the run
# (15.5 min against a 12.5 min floor of CPU time). Each worker has its own database, Redis
# database, S3 node and stack (tests/fixtures); a file's tests stay on one worker, so a module's
# lector is started once. LECTOR_TEST_WORKERS=0 runs in one process.
# Memory caps it too: a worker with the Kokoro and Whisper models in process, beside the stacks
# its files start, peaks near 8 GiB; three on a 24 GiB machine were killed by the OOM killer.
# OpenMP threads that wait for work sleep instead of spinning. The suite runs several processes
# that each claim every core for torch (two workers, the farm's lane, the stacks' engines): with
# libgomp's default spin, two of them rendering at once on 2 vCPUs took 111 s for what took
# 65 s passive (36 s alone), so a spinning suite ran 1.2x longer. A lone engine is about 8%
# slower passive (bench.engine, Zen 4), which is why the service keeps the default; no test times one.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
# Memory: the workers, the stacks their files start and the farm's hosts share 24 GiB, and a run
# where `make run`'s whole tree, a farm test and a worker full of cached models met was cut short
# by the OOM killer. Each worker gives its models back after each file (tests/support/memory.py),
# and glibc keeps two malloc arenas a process instead of eight a core for the threads of the
# servers and engines, each arena holding freed memory of its own.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
cores=$(nproc)
mem_gib=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1048576 ))
by_cores=$(( cores < 4 ? 3 : 4 ))
by_memory=$(( mem_gib / 10 > 1 ? mem_gib / 10 : 1 ))
workers=${LECTOR_TEST_WORKERS:-$(( by_cores < by_memory ? by_cores : by_memory ))}
dist=()
if [ "$workers" -gt 0 ]; then dist=(-n "$workers" --dist loadfile); fi
# The farm's files (hosts in network namespaces, brokers killed and frozen) spend most of their
# minutes waiting on heartbeats, timeouts and the reaper, not on the CPU: on the whole suite they
# run in a lane of their own beside the workers, one file after another, instead of holding a
# worker for a fifth of the run. Their fixtures lease their own databases, ports and bridges.
# After them the lane runs the Kokoro files that need no service, the heaviest of them the
# voices' intelligibility (a fifth of a worker's run on a Zen 4, more where float32 is the CPU's
# precision): in the lane they fill the cores the farm's waits and the workers' waits on their
# stacks leave idle (`docs/benchmarks.md` has the timings). On every CPU measured the lane still
# ended before the workers (on a Zen 3 at 28.1 min against 35.6), so the compiled chains' and the
# precision drift's files (3.4 min of a worker there) run in it too. One after the other, the
# lane's memory is the larger of them.
farm_files=(tests/e2e/test_farm_*.py)
kokoro_files=(
  tests/integration/speech/test_kokoro_intelligibility.py
  tests/unit/speech/engines/kokoro/test_engine.py
  tests/unit/speech/engines/kokoro/test_parity.py
  tests/unit/speech/engines/kokoro/test_kernels.py
  tests/unit/speech/engines/kokoro/test_precision_drift.py
)
lane_files=("${farm_files[@]}" "${kokoro_files[@]}")
lane_pid=
if [ "$workers" -gt 0 ] && [ $# -eq 0 ] && [ -e "${farm_files[0]}" ]; then
  lane_log=$(mktemp)
  .venv/bin/python -m pytest -q -ra -p no:xdist "${lane_files[@]}" >"$lane_log" 2>&1 &
  lane_pid=$!
  dist+=(--ignore-glob='tests/e2e/test_farm_*.py')
  for file in "${kokoro_files[@]}"; do dist+=(--ignore="$file"); done
fi
.venv/bin/python -m pytest -q -ra --durations=25 "${dist[@]}" "$@"
rc=$?
if [ -n "$lane_pid" ]; then
  wait "$lane_pid"
  lane_rc=$?
  echo "--- the lane (${lane_files[*]}):" && cat "$lane_log" && rm -f "$lane_log"
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 5 ]; then rc=$lane_rc; fi
fi
wait "$lint_pid"
lint_rc=$?
cat "$lint_log" && rm -f "$lint_log"
if [ "$lint_rc" -ne 0 ]; then echo "lint-imports or mypy failed"; exit 1; fi
if [ "$rc" -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi
exit "$rc"
