#!/usr/bin/env bash
# Starts a one-node OpenStack Swift with s3api in DIR, everything on 127.0.0.1, the proxy on PORT.
#
#   infra/swift/start.sh DIR PORT      (stop it with infra/swift/stop.sh DIR)
#
# Why Swift: it is a real S3 implementation available from Debian (it checks SigV4 signatures,
# expires presigned URLs, returns multipart ETags "...-N"), where mocks such as moto accept
# unsigned requests and expired links.
#
# Everything lives in DIR: configs (swift_dir = DIR, so /etc/swift is never read or touched),
# rings, the storage device, logs (DIR/log/*.log) and PIDs (DIR/run/*.pid). Several copies may run
# at once with different DIR/PORT: the three storage servers take random free ports below the
# kernel's ephemeral range, so they cannot collide with client sockets. S3 credentials: access key
# `test:tester`, secret `testing`, region `us-east-1`. Exits 0 only once every server answers
# /healthcheck; on failure it stops what it started and prints the logs' tails.
set -euo pipefail

usage() { echo "usage: $0 DIR PORT" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
[[ "$2" =~ ^[0-9]+$ ]] || usage
PORT=$2
mkdir -p "$1"
DIR=$(cd "$1" && pwd -P)
HERE=$(cd "$(dirname "$0")" && pwd -P)
SYS_PY=/usr/bin/python3            # Debian's python: the one that has the swift package
READY_TIMEOUT_S=${SWIFT_READY_TIMEOUT_S:-60}
SERVERS=(account container object proxy)

for bin in swift-proxy-server swift-account-server swift-container-server swift-object-server; do
    command -v "$bin" >/dev/null 2>&1 || {
        echo "$0: $bin not found; run infra/swift/install.sh first" >&2; exit 1; }
done

if compgen -G "$DIR/run/*.pid" >/dev/null; then
    for f in "$DIR"/run/*.pid; do
        if kill -0 "$(cat "$f")" 2>/dev/null; then
            echo "$0: a Swift is already running in $DIR (stop it with stop.sh $DIR)" >&2; exit 1
        fi
    done
fi
rm -rf "$DIR/run" "$DIR/log"
mkdir -p "$DIR/run" "$DIR/log" "$DIR/cache" "$DIR/srv/d1"

# Never run the servers as root. Swift drops privileges to `user` only in forked workers, and with
# workers = 0 (one process, whose PID we can record) it does not fork; so as root we start them
# through setpriv (which execs in place: the PID stays the server's) as a dedicated system user.
if [[ $(id -u) -eq 0 ]]; then
    RUN_USER=lector-swift
    if ! getent passwd "$RUN_USER" >/dev/null; then
        # Two concurrent starts may race here: losing the race is fine if the user now exists.
        useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
            "$RUN_USER" 2>/dev/null || getent passwd "$RUN_USER" >/dev/null
    fi
    AS_USER=(setpriv --reuid="$RUN_USER" --regid="$RUN_USER" --init-groups --)
else
    RUN_USER=$(id -un)
    AS_USER=()
fi

# Ports for the storage servers: random, free, and outside the ephemeral range.
read -r -a PORTS <<<"$("$SYS_PY" - "$PORT" <<'EOF'
import random, socket, sys
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
taken, out = {int(sys.argv[1])}, []
while len(out) < 3:
    port = random.randint(10000, low - 1)
    if port in taken:
        continue
    taken.add(port)
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Swift binds: TIME_WAIT is fine
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
    out.append(port)
print(*out)
EOF
)"
ACCOUNT_PORT=${PORTS[0]} CONTAINER_PORT=${PORTS[1]} OBJECT_PORT=${PORTS[2]}

"$SYS_PY" - "$PORT" <<'EOF' || { echo "$0: port $PORT is already in use" >&2; exit 1; }
import socket, sys
with socket.socket() as s:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(sys.argv[1])))
    s.listen()
EOF

cat >"$DIR/swift.conf" <<EOF
[swift-hash]
swift_hash_path_prefix = lector-dev
swift_hash_path_suffix = lector-dev

[storage-policy:0]
name = Policy-0
default = yes
EOF

# Settings every storage server shares: one device dir, no mount checks, no fallocate (tmp dirs
# on small disks), single process (workers = 0, so the PID we record is the server itself).
storage_defaults() {  # $1 = port, $2 = log name
    cat <<EOF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $1
workers = 0
user = $RUN_USER
swift_dir = $DIR
devices = $DIR/srv
mount_check = false
disable_fallocate = true
fallocate_reserve = 0
recon_cache_path = $DIR/cache
log_name = $2
log_level = WARNING
EOF
}

for server in account container object; do
    port_var="${server^^}_PORT"
    {
        storage_defaults "${!port_var}" "$server"
        cat <<EOF

[pipeline:main]
pipeline = healthcheck $server-server

[app:$server-server]
use = egg:swift#$server

[filter:healthcheck]
use = egg:swift#healthcheck
EOF
    } >"$DIR/$server-server.conf"
done

cat >"$DIR/proxy-server.conf" <<EOF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $PORT
workers = 0
user = $RUN_USER
swift_dir = $DIR
log_name = proxy
log_level = WARNING

[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats bulk tempurl s3api tempauth copy slo dlo proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
allow_account_management = true

[filter:catch_errors]
use = egg:swift#catch_errors

[filter:gatekeeper]
use = egg:swift#gatekeeper

[filter:healthcheck]
use = egg:swift#healthcheck

[filter:proxy-logging]
use = egg:swift#proxy_logging

[filter:cache]
use = egg:swift#memcache

[filter:listing_formats]
use = egg:swift#listing_formats

[filter:bulk]
use = egg:swift#bulk

[filter:tempurl]
use = egg:swift#tempurl

[filter:s3api]
use = egg:swift#s3api
location = us-east-1

[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = testing .admin

[filter:copy]
use = egg:swift#copy

[filter:slo]
use = egg:swift#slo

[filter:dlo]
use = egg:swift#dlo
EOF

# Rings, built in one Python process (nine swift-ring-builder runs would cost seconds).
"$SYS_PY" - "$DIR" "$ACCOUNT_PORT" "$CONTAINER_PORT" "$OBJECT_PORT" <<'EOF'
import sys
from swift.common.ring import RingBuilder

swift_dir, ports = sys.argv[1], dict(zip(("account", "container", "object"), map(int, sys.argv[2:])))
for name, port in ports.items():
    builder = RingBuilder(10, 1, 1)
    builder.add_dev({"region": 1, "zone": 1, "ip": "127.0.0.1", "port": port, "device": "d1", "weight": 1})
    builder.rebalance()
    builder.save(f"{swift_dir}/{name}.builder")
    builder.get_ring().save(f"{swift_dir}/{name}.ring.gz")
EOF

chown -R "$RUN_USER" "$DIR"
# The servers must be able to reach DIR: give the run user traverse rights on its parents
# (pytest's tmp dirs are 0700 root).
parent=$(dirname "$DIR")
while [[ "$parent" != "/" ]]; do
    if [[ $(id -u) -eq 0 ]] && ! runuser -u "$RUN_USER" -- test -x "$parent" 2>/dev/null; then
        if command -v setfacl >/dev/null 2>&1; then
            setfacl -m "u:$RUN_USER:x" "$parent"
        else
            chmod o+x "$parent"
        fi
    fi
    parent=$(dirname "$parent")
done

stop_all() { bash "$HERE/stop.sh" "$DIR" >/dev/null 2>&1 || true; }
fail() {
    echo "$0: $1" >&2
    for s in "${SERVERS[@]}"; do
        echo "--- $DIR/log/$s.log (tail)" >&2
        tail -n 20 "$DIR/log/$s.log" >&2 2>/dev/null || true
    done
    stop_all
    exit 1
}
trap 'fail "interrupted"' INT TERM

for s in "${SERVERS[@]}"; do
    # Detached from our stdio (a caller capturing our output must not wait on the servers).
    HOME="$DIR" "${AS_USER[@]}" "swift-$s-server" "$DIR/$s-server.conf" -v \
        </dev/null >"$DIR/log/$s.log" 2>&1 &
    echo $! >"$DIR/run/$s.pid"
done

# Ready when every server (not only the proxy) answers /healthcheck; one poller, not a process
# per probe. It exits 3 if a server died, 4 on timeout.
set +e
"$SYS_PY" - "$DIR" "$READY_TIMEOUT_S" "$PORT" "$ACCOUNT_PORT" "$CONTAINER_PORT" "$OBJECT_PORT" <<'EOF'
import os, sys, time, urllib.request

run_dir, timeout = sys.argv[1] + "/run", float(sys.argv[2])
ports = dict(zip(("proxy", "account", "container", "object"), sys.argv[3:]))
deadline, pending = time.monotonic() + timeout, set(ports)
while pending:
    for name in sorted(pending):
        pid = int(open(f"{run_dir}/{name}.pid").read())
        try:  # a dead child our shell has not reaped yet is a zombie ("Z"), not alive
            alive = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            alive = False
        if not alive:
            print(f"swift-{name}-server exited during start", file=sys.stderr)
            sys.exit(3)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ports[name]}/healthcheck", timeout=1) as r:
                if r.read() == b"OK":
                    pending.discard(name)
        except OSError:
            pass
    if pending and time.monotonic() > deadline:
        print(f"not ready after {timeout:.0f}s: {' '.join(sorted(pending))}", file=sys.stderr)
        sys.exit(4)
    if pending:
        time.sleep(0.1)
EOF
rc=$?
set -e
[[ $rc -eq 0 ]] || fail "Swift did not start (see the logs above)"
trap - INT TERM
echo "swift s3api ready on http://127.0.0.1:$PORT (dir $DIR)"
