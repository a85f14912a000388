"""``infra/farm/farm.py`` with two farms up at once, as two ``make test`` workers build them: each
has a bridge, a /24, namespaces and veths of its own, a host of one cannot reach the other's
bridge, a farm index whose namespaces outlived their bridge is passed over, and ``down`` leaves
nothing behind. Needs root (namespaces, bridges), as the farm tests do."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.fixtures.farm import farm_module

pytestmark = pytest.mark.integration


def _routed(ns: str, address: str) -> bool:
    """Whether namespace ``ns`` has a route to ``address`` (a farm's hosts have only their /24)."""
    done = subprocess.run(["ip", "netns", "exec", ns, "ip", "route", "get", address], capture_output=True, check=False)
    return done.returncode == 0


def test_two_farms_at_once_share_nothing(tmp_path: Path) -> None:
    farm_py = farm_module()
    first = farm_py.Farm.up(tmp_path / "a")
    second = None
    try:
        first.add_host("h1")
        second = farm_py.Farm.up(tmp_path / "b")
        second.add_host("h1")
        assert first.bridge != second.bridge and first.gateway != second.gateway
        assert first.hosts["h1"].ns != second.hosts["h1"].ns and first.hosts["h1"].veth != second.hosts["h1"].veth
        assert first.gateway.rsplit(".", 1)[0] != second.gateway.rsplit(".", 1)[0]  # another /24
        assert Path(first.hosts["h1"].data_dir).parent != Path(second.hosts["h1"].data_dir).parent
        assert _routed(first.hosts["h1"].ns, first.gateway)
        assert not _routed(first.hosts["h1"].ns, second.gateway)
        assert not _routed(second.hosts["h1"].ns, first.hosts["h1"].address)
    finally:
        first.down()
        if second is not None:
            second.down()
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout
    for farm in (first, second):
        assert farm is not None
        assert f" {farm.bridge}:" not in links
        assert not Path("/run/netns", f"lfarm{farm.index}-h1").exists()


def test_an_index_whose_namespaces_outlived_their_bridge_is_passed_over(tmp_path: Path) -> None:
    """A farm killed half-way through ``down`` can leave ``lfarmK-*`` behind without its bridge;
    the next farm must not take K (its namespaces' names would collide)."""
    farm_py = farm_module()
    probe = farm_py.Farm.up(tmp_path / "probe")  # the index the next farm would take
    index = probe.index
    probe.down()
    stale = f"lfarm{index}-h9"
    subprocess.run(["ip", "netns", "add", stale], check=True)
    farm = None
    try:
        farm = farm_py.Farm.up(tmp_path / "next")
        assert farm.index != index
    finally:
        if farm is not None:
            farm.down()
        subprocess.run(["ip", "netns", "delete", stale], check=False)
