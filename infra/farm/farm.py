#!/usr/bin/env python3
"""A farm of lector worker hosts on one machine: network namespaces on a private bridge.

Why: lector's batch engine is meant to run on many GPU hosts sharing one broker, one PostgreSQL
and one S3, and what a host's loss costs (a half-open TCP connection nobody closes, a frozen
process that wakes up late) can only be seen across a network. Each "host" here is a network
namespace with one veth on a bridge of its own, a private /24 (10.210.K.0/24, K free per farm):
it reaches the machine's services only through socat forwarders bound to the bridge's address,
and has no route anywhere else. Run as root (namespaces, bridge, nftables).

By hand::

    python infra/farm/farm.py up DIR --hosts 3 --probed 5432 --forward 5672 --forward 6379
    python infra/farm/farm.py start DIR h1 synth-h1 --queues synth --env-file env.txt
    python infra/farm/farm.py kill DIR h1          # link down, then SIGKILL (no FIN reaches anyone)
    python infra/farm/farm.py freeze DIR h2 / thaw DIR h2
    python infra/farm/farm.py cut DIR h3 5432 / mend DIR h3
    python infra/farm/farm.py down DIR             # everything it started, by pid

Everything started is recorded in ``DIR/farm.json`` as it is started (pids, process groups,
namespaces, the bridge), so ``down`` from any process, also after a crashed test, removes it all.
The test fixture (``tests/fixtures/farm.py``) loads this file and drives the same ``Farm``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

SUBNET_PREFIX = "10.210"  # the only addresses a farm ever uses: 10.210.K.0/24
MAX_FARMS = 64
STATE = "farm.json"


def sh(*argv: str, check: bool = True, ns: str | None = None, stdin: str | None = None) -> str:
    """Run a command (inside namespace ``ns`` when given); its stdout."""
    full = (["ip", "netns", "exec", ns] if ns else []) + list(argv)
    result = subprocess.run(full, capture_output=True, text=True, input=stdin, check=False)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(full)} failed ({result.returncode}): {result.stderr.strip()}")
    return result.stdout


@dataclass
class Host:
    name: str
    ns: str
    veth: str
    address: str
    data_dir: str
    workers: dict[str, int] = field(default_factory=dict)  # worker name -> pid (its own process group)


@dataclass
class Farm:
    """One farm's bridge, hosts and forwarders; every change is saved to ``DIR/farm.json``."""

    dir: str
    index: int
    bridge: str
    gateway: str
    hosts: dict[str, Host] = field(default_factory=dict)
    forwarders: dict[str, int] = field(default_factory=dict)  # "port" -> socat pid

    # -- state ------------------------------------------------------------------------------
    def save(self) -> None:
        path = Path(self.dir) / STATE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=1))
        tmp.replace(path)

    @classmethod
    def load(cls, directory: str | Path) -> Farm:
        raw = json.loads((Path(directory) / STATE).read_text())
        hosts = {name: Host(**host) for name, host in raw.pop("hosts").items()}
        return cls(**raw, hosts=hosts)

    # -- building ---------------------------------------------------------------------------
    @classmethod
    def up(cls, directory: str | Path) -> Farm:
        """A bridge with a free 10.210.K.0/24 of its own. Creating the bridge is the claim:
        ``ip link add`` fails for a taken K, so two farms started at once (two test workers, two
        checkouts) never share a K, and everything named after K (the /24, the namespaces
        ``lfarmK-*``, the veths ``lfK*``) is theirs alone. A K whose namespaces outlived their
        bridge (a farm killed half-way through ``down``) is passed over, not reused."""
        root = Path(directory).resolve()
        root.mkdir(parents=True, exist_ok=True)
        for index in range(MAX_FARMS):
            bridge = f"lfarm{index}"
            if subprocess.run(["ip", "link", "add", bridge, "type", "bridge"], capture_output=True).returncode != 0:
                continue
            if not _stale_namespaces(index):
                break
            sh("ip", "link", "delete", bridge, check=False)
        else:
            raise RuntimeError(f"no free farm bridge (lfarm0..lfarm{MAX_FARMS - 1} all taken)")
        farm = cls(dir=str(root), index=index, bridge=bridge, gateway=f"{SUBNET_PREFIX}.{index}.1")
        farm.save()
        _no_ipv6(bridge)  # no link-local chatter: the farm's traffic is its /24's and nothing else
        sh("ip", "addr", "add", f"{farm.gateway}/24", "dev", bridge)
        sh("ip", "link", "set", bridge, "up")
        return farm

    def add_host(self, name: str) -> Host:
        """A namespace with loopback and one veth on the bridge; no default route (only the /24)."""
        number = len(self.hosts) + 1
        host = Host(
            name=name, ns=f"lfarm{self.index}-{name}", veth=f"lf{self.index}{name}"[:15],
            address=f"{SUBNET_PREFIX}.{self.index}.{10 + number}",
            data_dir=str(Path(self.dir) / "hosts" / name),
        )
        Path(host.data_dir).mkdir(parents=True, exist_ok=True)
        self.hosts[name] = host
        self.save()  # before creating: a failure half-way is still torn down
        sh("ip", "netns", "add", host.ns)
        sh("ip", "link", "add", host.veth, "type", "veth", "peer", "name", "eth0", "netns", host.ns)
        _no_ipv6(host.veth)
        for scope in ("all", "default", "lo", "eth0"):
            sh("sysctl", "-qw", f"net.ipv6.conf.{scope}.disable_ipv6=1", ns=host.ns, check=False)
        sh("ip", "link", "set", host.veth, "master", self.bridge)
        sh("ip", "link", "set", host.veth, "up")
        sh("ip", "link", "set", "lo", "up", ns=host.ns)
        sh("ip", "addr", "add", f"{host.address}/24", "dev", "eth0", ns=host.ns)
        sh("ip", "link", "set", "eth0", "up", ns=host.ns)
        return host

    def forward(self, port: int, target_port: int | None = None, *, probe: bool = False) -> str:
        """The machine's service on 127.0.0.1:``target_port`` as gateway:``port`` (socat, one
        child per connection); the service sees 127.0.0.1, so trust logins and ``guest`` work.

        ``probe``: for a service that probes its clients itself. PostgreSQL does, with
        ``store.db.session``'s settings (keepalives when idle, a TCP user timeout when its data
        goes unacknowledged), and ends the session of a vanished host; through socat it sees only
        socat, alive. So socat's socket to the host carries the same settings (TCP_USER_TIMEOUT
        is option 18 of level 6, IPPROTO_TCP) and, when the host stays silent, closes both sides:
        the service sees its client go, as it would without socat. Not for RabbitMQ, which
        finds a dead host by its heartbeats (socat's probes would find it first)."""
        target = target_port or port
        listen = f"TCP-LISTEN:{port},bind={self.gateway},reuseaddr,fork"
        if probe:
            listen += ",keepalive,keepidle=15,keepintvl=5,keepcnt=3,setsockopt-int=6:18:15000"
        proc = subprocess.Popen(
            ["socat", listen, f"TCP:127.0.0.1:{target}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        self.forwarders[str(port)] = proc.pid
        self.save()
        deadline = time.monotonic() + 10
        while not _listening(self.gateway, port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"socat did not listen on {self.gateway}:{port}")
            time.sleep(0.05)
        return f"{self.gateway}:{port}"

    def start(self, host: str, worker: str, argv: list[str], env: dict[str, str], log: Path) -> int:
        """``argv`` inside ``host``'s namespace, in a process group of its own (a kill takes its
        children too); its pid, recorded before anything can fail."""
        target = self.hosts[host]
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                ["ip", "netns", "exec", target.ns, *argv], env=env, stdin=subprocess.DEVNULL,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )
        target.workers[worker] = proc.pid
        self.save()
        return proc.pid

    # -- faults -----------------------------------------------------------------------------
    def pids(self, host: str) -> list[int]:
        """Every process in the host's namespace (``ip netns pids``), its workers' groups too."""
        target = self.hosts[host]
        found = {int(p) for p in sh("ip", "netns", "pids", target.ns, check=False).split()}
        for pgid in target.workers.values():
            found.update(_group(pgid))
        return sorted(found)

    def kill(self, host: str) -> None:
        """The host vanishes: its link goes down first (no FIN or RST reaches the broker or the
        database; their connections stay half-open), then every process of it gets SIGKILL."""
        sh("ip", "link", "set", self.hosts[host].veth, "down", check=False)
        self.signal(host, signal.SIGKILL)

    def revive(self, host: str) -> None:
        """A killed host's link back up (its processes stay dead: start new ones)."""
        sh("ip", "link", "set", self.hosts[host].veth, "up")

    def signal(self, host: str, sig: int) -> None:
        for pid in self.pids(host):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def freeze(self, host: str) -> None:
        self.signal(host, signal.SIGSTOP)

    def thaw(self, host: str) -> None:
        self.signal(host, signal.SIGCONT)

    def cut(self, host: str, port: int) -> None:
        """Drop the host's packets to gateway:``port`` only (nftables inside its namespace):
        its other services still answer."""
        ns = self.hosts[host].ns
        rules = (
            "table inet farmcut {\n chain out {\n  type filter hook output priority 0; policy accept;\n"
            f"  ip daddr {self.gateway} tcp dport {port} drop\n }}\n}}\n"
        )
        sh("nft", "-f", "-", ns=ns, stdin=rules)

    def mend(self, host: str) -> None:
        sh("nft", "delete", "table", "inet", "farmcut", ns=self.hosts[host].ns, check=False)

    # -- teardown ---------------------------------------------------------------------------
    def down(self) -> None:
        """Everything this farm started, by pid: workers' process groups and whatever else runs
        in the namespaces, the forwarders and their per-connection children, the namespaces
        (their veths go with them), the bridge. Safe to call twice."""
        for name, host in self.hosts.items():
            if _ns_exists(host.ns):
                sh("ip", "link", "set", host.veth, "down", check=False)
                self.signal(name, signal.SIGKILL)
            else:
                for pgid in host.workers.values():
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(pgid, signal.SIGKILL)
        for pid in self.forwarders.values():
            _stop_tree(pid)
        for host in self.hosts.values():
            _wait_gone([*host.workers.values()])
            if _ns_exists(host.ns):
                sh("ip", "netns", "delete", host.ns, check=False)
            # The namespace outlives its name while its orphaned sockets retry a FIN over a dead
            # link (minutes); deleting our end of the veth pair removes both ends now.
            sh("ip", "link", "delete", host.veth, check=False)
        sh("ip", "link", "delete", self.bridge, check=False)
        self.hosts, self.forwarders = {}, {}
        self.save()


def _no_ipv6(interface: str) -> None:
    with contextlib.suppress(OSError):
        Path(f"/proc/sys/net/ipv6/conf/{interface}/disable_ipv6").write_text("1")


def _listening(address: str, port: int) -> bool:
    import socket

    with contextlib.suppress(OSError), socket.create_connection((address, port), timeout=0.3):
        return True
    return False


def _ns_exists(ns: str) -> bool:
    return Path("/run/netns", ns).exists()


def _stale_namespaces(index: int) -> list[str]:
    """Namespaces named for farm ``index`` (``lfarm<index>-<host>``) that exist now."""
    netns = Path("/run/netns")
    return sorted(p.name for p in netns.glob(f"lfarm{index}-*")) if netns.is_dir() else []


def _group(pgid: int) -> set[int]:
    """Live pids whose process group is ``pgid`` (read from /proc, no ``ps`` needed)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid:
                found.add(int(entry.name))
    return found


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def _stop_tree(pid: int) -> None:
    """A socat forwarder and the children it forked per connection (``pkill -P`` by hand)."""
    for child in _children(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _wait_gone([pid])


def _wait_gone(pids: list[int], timeout: float = 10.0) -> None:
    """Reap our own children; wait for others to leave /proc."""
    deadline = time.monotonic() + timeout
    for pid in pids:
        while time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    break
            if not Path(f"/proc/{pid}").exists():
                break
            time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="bridge, hosts and forwarders")
    up.add_argument("dir")
    up.add_argument("--hosts", type=int, default=3)
    up.add_argument("--forward", type=int, action="append", default=[], help="a 127.0.0.1 port to offer on the bridge")
    up.add_argument("--probed", type=int, action="append", default=[],
                    help="the same, probing the hosts for the service (PostgreSQL: see Farm.forward)")
    start = sub.add_parser("start", help="a lector worker inside a host")
    start.add_argument("dir")
    start.add_argument("host")
    start.add_argument("worker")
    start.add_argument("--queues", default="synth,cpu,live")
    start.add_argument("--pool", default="threads")
    start.add_argument("--env-file", help="KEY=VALUE lines (LECTOR_* with the bridge's addresses)")
    for name in ("kill", "freeze", "thaw", "mend"):
        one = sub.add_parser(name)
        one.add_argument("dir")
        one.add_argument("host")
    cut = sub.add_parser("cut", help="drop a host's packets to one forwarded port")
    cut.add_argument("dir")
    cut.add_argument("host")
    cut.add_argument("port", type=int)
    down = sub.add_parser("down")
    down.add_argument("dir")
    args = parser.parse_args(argv)

    if args.command == "up":
        farm = Farm.up(args.dir)
        try:
            for number in range(1, args.hosts + 1):
                farm.add_host(f"h{number}")
            for port in args.forward:
                farm.forward(port)
            for port in args.probed:
                farm.forward(port, probe=True)
        except BaseException:
            farm.down()
            raise
        print(json.dumps({"gateway": farm.gateway, "hosts": {h.name: h.address for h in farm.hosts.values()}}))  # noqa: T201
        return 0
    farm = Farm.load(args.dir)
    if args.command == "start":
        env = dict(os.environ)
        if args.env_file:
            for line in Path(args.env_file).read_text().splitlines():
                if "=" in line and not line.lstrip().startswith("#"):
                    key, value = line.split("=", 1)
                    env[key.strip()] = value.strip()
        env["LECTOR_DATA_DIR"] = farm.hosts[args.host].data_dir
        lector = str(Path(sys.executable).with_name("lector"))
        argv_ = [lector, "worker", "--queues", args.queues, "--pool", args.pool, "--name", f"{args.worker}@{args.host}"]
        log = Path(farm.hosts[args.host].data_dir) / f"{args.worker}.log"
        print(farm.start(args.host, args.worker, argv_, env, log))  # noqa: T201
    elif args.command == "cut":
        farm.cut(args.host, args.port)
    elif args.command == "down":
        farm.down()
    else:
        getattr(farm, args.command)(args.host)
    return 0


if __name__ == "__main__":
    sys.exit(main())
