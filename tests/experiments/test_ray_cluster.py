"""On a Ray cluster of two nodes the driver owns every file: the actors get their plans
and cache hits from it and send turns and new replies back, and disputelab reaches the
nodes through Ray's runtime environment.

The test starts a head and a second node on this machine, as separate `ray start`
processes, each with a temporary directory of its own, and in a mount namespace where the
driver's directory (its store, its cache, its working directory) is an empty file system:
a path handed from the driver leads nowhere on the nodes, as on other hosts. Skipped only
where Ray is not installed (`.ci/run` installs it) or mount namespaces are not allowed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from disputelab.llm.cache import ResponseCache
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from disputelab.store.sqlite import Store
from tests.helpers import stored_turns

pytest.importorskip("ray", reason="Ray is not installed: pip install 'disputelab[ray]'")
pytestmark = pytest.mark.slow  # starts two Ray nodes

# Generous: at a load of 10 on two cores a Ray node takes long to come up.
START_S = 600
STOP_GRACE_S = 20
# The files disputelab writes (store, response cache, counsel memory, saved sets).
OURS = ("sqlite", "disputelab-runs", "exemplars", "memory")
NODE_IPS = {"nodeA": "127.0.0.2", "nodeB": "127.0.0.3"}


@dataclass
class Cluster:
    address: str
    dirs: dict[str, Path]  # each node's temporary directory, by its resource label
    driver: Path  # the driver's: its store and cache, which no node can see


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Ray's token authentication, which a local `ray.init` earlier in this process switches
# on for its children (keeping a token under the home directory).
AUTH_VARS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


def _env(home: Path, **more: str) -> dict[str, str]:
    """An environment of the test's, with `home` as its home directory (as on a host of
    its own) and none of the Ray settings an earlier test may have left in this process:
    the short-lived cluster, on loopback addresses, runs without tokens."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and k not in AUTH_VARS}
    base = {"HOME": str(home), "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    return env | base | more


def _node_env(where: Path) -> dict[str, str]:
    """A node's: it cannot import this checkout (disputelab must reach it through Ray)."""
    return _env(where)


# A node's view of the driver's directory: an empty file system of its own, mounted over
# it in a mount namespace of the node's, so that a path handed from the driver leads
# nowhere on the node, as on another host.
HIDE = 'mount -t tmpfs none "$0" && exec "$@"'
UNSHARE = ["unshare", "--mount", "--propagation", "private"]


def _can_hide() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run([*UNSHARE, "true"], capture_output=True, check=False)
    return probe.returncode == 0


def _ray_start(args: list[str], env: dict[str, str], driver: Path) -> subprocess.Popen[bytes]:
    """`ray start ARGS`, with `driver` hidden from the node it starts, in a session of
    its own, so that every process of that node can be ended by the group's id, however
    the test ends."""
    where = Path(env["HOME"])
    ray_cli = Path(sys.executable).with_name("ray")
    log = (where / "start.log").open("wb")
    return subprocess.Popen(
        [*UNSHARE, "sh", "-c", HIDE, str(driver), str(ray_cli), "start", *args],
        cwd=where,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _node_args(label: str, where: Path) -> list[str]:
    return [
        # An address of its own in the loopback range for each node, as separate hosts
        # would have (Ray replaces 127.0.0.1 itself with the host's outward address).
        f"--node-ip-address={NODE_IPS[label]}",
        f"--temp-dir={where}",
        "--num-cpus=1",
        f"--resources={json.dumps({label: 1})}",
        "--object-store-memory=100000000",
        "--disable-usage-stats",
    ]


def _started(proc: subprocess.Popen[bytes], where: Path) -> None:
    if proc.wait(timeout=START_S) != 0:
        pytest.fail(f"ray start failed:\n{(where / 'start.log').read_text()[-3000:]}")


def _end(groups: list[int]) -> None:
    """End every process of the nodes: politely, then for good."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for group in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, sig)
        deadline = time.monotonic() + STOP_GRACE_S
        while sig == signal.SIGTERM and time.monotonic() < deadline and _any_alive(groups):
            time.sleep(0.5)


def _any_alive(groups: list[int]) -> bool:
    for group in groups:
        try:
            os.killpg(group, 0)
            return True
        except ProcessLookupError:
            continue
    return False


DRIVER = Path(__file__).with_name("ray_cluster_driver.py")
CHECKOUT = Path(__file__).resolve().parents[2]


def _drive(cluster: Cluster, url: str) -> dict[str, Any]:
    """Run the driver (`ray_cluster_driver.py`) in a process of its own, from its own
    directory: Ray puts the driver's working directory on every worker's path, which on
    one host would let the nodes import disputelab from this checkout rather than from
    what Ray shipped them."""
    env = _env(cluster.driver, PYTHONPATH=str(CHECKOUT))
    args = [cluster.address, NODE_IPS["nodeA"], url, str(cluster.driver)]
    done = subprocess.run(
        [sys.executable, str(DRIVER), *args],
        cwd=cluster.driver,
        env=env,
        capture_output=True,
        text=True,
        timeout=START_S * 2,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    if not _can_hide():
        pytest.skip(
            "needs mount namespaces (unshare --mount) to keep the nodes off the driver's files"
        )
    # Short paths: Ray's sockets live in the temporary directory, and a socket's path
    # has a length limit that pytest's own temporary paths can exceed.
    top = Path(tempfile.mkdtemp(prefix="dl-ray-"))
    driver = top / "driver"
    dirs = {"nodeA": top / "a", "nodeB": top / "b"}
    for d in (driver, *dirs.values()):
        d.mkdir()
    port = _free_port()
    address = f"{NODE_IPS['nodeA']}:{port}"
    head_args = ["--head", f"--port={port}", "--include-dashboard=false"]
    groups: list[int] = []
    try:
        for label, first in (("nodeA", head_args), ("nodeB", [f"--address={address}"])):
            args = [*first, *_node_args(label, dirs[label])]
            proc = _ray_start(args, _node_env(dirs[label]), driver)
            groups.append(proc.pid)
            _started(proc, dirs[label])
        yield Cluster(address, dirs, driver)
    finally:
        _end(groups)
        shutil.rmtree(top, ignore_errors=True)


def _answer(body: dict[str, Any]) -> Scripted:
    schema = requested_schema(body)
    return Scripted(content=json.dumps(fill(schema, text="Split the deposit?")))


def _files_of_ours(where: Path) -> list[str]:
    """Files under `where` named like one disputelab writes, other than the copy of the
    package Ray unpacked there (which has modules named so)."""
    return sorted(
        str(p.relative_to(where))
        for p in where.rglob("*")
        if any(w in p.name for w in OURS) and "runtime_resources" not in p.parts
    )


def test_a_grid_on_two_nodes_is_stored_once_by_the_driver_and_replayed_free(
    cluster: Cluster,
) -> None:
    with fake_openai(_answer) as server:
        seen = _drive(cluster, server.url)
        asked = server.calls
    first, again = seen["first"], seen["again"]

    assert first["done"] == 4 and first["failed"] == 0, first["errors"]
    assert again["done"] == 4 and again["failed"] == 0, again["errors"]
    assert first["calls"] == 12  # 4 episodes x 3 party turns
    assert asked == 12 + first["retries"]  # a dropped keep-alive, say; nothing for `again`
    assert again["calls"] == 0 and again["cached"] == 12
    filed = ResponseCache(cluster.driver / "cache.sqlite")
    assert len(filed) == 12  # every reply the actors got, in the driver's cache
    filed.close()

    # Every episode once in the driver's store, each turn once.
    store = Store(cluster.driver / "runs", writable=False)
    for run in ("first", "again"):
        ids = store.episode_ids(run)
        assert len(ids) == len(set(ids)) == 4
        assert store.complete_episode_ids(run) == set(ids)
    turns = stored_turns(store.db)
    assert len(turns) == len(set(turns)) == 24
    store.close()

    # The actors ran on both nodes, each with the disputelab that Ray shipped to it.
    nodes = seen["nodes"]
    for run in (first, again):
        assert {node for node, _ in run["placed"]} == set(nodes.values())
        for node, package in run["placed"]:
            label = next(k for k, v in nodes.items() if v == node)
            assert Path(package).is_relative_to(cluster.dirs[label]), package

    # Nothing of disputelab's on the nodes: the cache and store are the driver's alone.
    for where in cluster.dirs.values():
        assert _files_of_ours(where) == []
