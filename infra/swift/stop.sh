#!/usr/bin/env bash
# Stops the Swift that infra/swift/start.sh started in DIR: every PID recorded in DIR/run gets
# SIGTERM, then SIGKILL after a grace period, so nothing is left running. Safe to call twice and
# on a DIR whose start failed half-way. Only PIDs whose command line names DIR are signalled, so a
# stale pid file can never kill an unrelated process that reused the number.
set -uo pipefail

[[ $# -eq 1 ]] || { echo "usage: $0 DIR" >&2; exit 2; }
[[ -d "$1" ]] || exit 0
DIR=$(cd "$1" && pwd -P)
GRACE_S=${SWIFT_STOP_GRACE_S:-5}

ours() {  # $1 = pid: alive, not a zombie, and started with a config from DIR
    local pid=$1 state
    [[ -r /proc/$pid/cmdline ]] || return 1
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
    [[ "$state" != Z ]] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$DIR/"
}

pids=()
for f in "$DIR"/run/*.pid; do
    [[ -e "$f" ]] || continue
    pid=$(cat "$f" 2>/dev/null)
    [[ "$pid" =~ ^[0-9]+$ ]] && ours "$pid" && pids+=("$pid")
done

[[ ${#pids[@]} -gt 0 ]] && kill -TERM "${pids[@]}" 2>/dev/null
deadline=$((SECONDS + GRACE_S))
killed_at=
while :; do
    alive=()
    for pid in "${pids[@]+"${pids[@]}"}"; do ours "$pid" && alive+=("$pid"); done
    [[ ${#alive[@]} -eq 0 ]] && break
    if [[ -n "$killed_at" ]] && ((SECONDS - killed_at > 5)); then
        echo "$0: still alive after SIGKILL: ${alive[*]}" >&2
        exit 1
    fi
    if [[ -z "$killed_at" ]] && ((SECONDS >= deadline)); then
        kill -KILL "${alive[@]}" 2>/dev/null
        killed_at=$SECONDS
    fi
    sleep 0.1
done
rm -f "$DIR"/run/*.pid
exit 0
