"""The driver of `test_ray_cluster`: a process of its own, as a driver on a real cluster
is, so that no Ray session an earlier test ran in the test's process is about.

`python ray_cluster_driver.py ADDRESS NODE_IP ENDPOINT_URL ROOT` joins the cluster at
ADDRESS from this host's NODE_IP, plays the same small LLM grid twice (`first`, then
`again`) into the store and response cache under ROOT, with one actor held to each
node, and prints what it saw as one line of JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import ray

from disputelab.experiments.on_ray import RayExecutor, runtime_env
from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub, Profile
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.store.sqlite import Store

LABELS = ("nodeA", "nodeB")  # each node's own resource, as the test started it


def _spec(name: str) -> ExperimentSpec:
    return ExperimentSpec(
        name=name,
        scenarios=["tenancy"],
        mediators=["none"],
        parties="llm",
        models={"parties": "stub"},
        replicates=4,
        params={"budget": 3},
    )


def _grid(name: str, address: str, url: str, root: Path) -> dict[str, Any]:
    hub = ModelHub(root / "cache.sqlite", {"stub": Profile(model="m", base_url=url)}, concurrency=4)
    placement = [{"resources": {label: 0.5}} for label in LABELS]
    executor = RayExecutor(2, address=address, placement=placement)
    store = Store(root / "runs")
    try:
        plan = plan_experiment(_spec(name), base=root)
        summary = asyncio.run(run_experiment(store, plan, hub, executor=executor))
    finally:
        store.close()
    parties = hub.ledger.roles.get("parties")
    return {
        "done": summary.done,
        "failed": summary.failed,
        "errors": list(summary.errors),
        "calls": hub.ledger.calls,
        "cached": parties.cached if parties else 0,
        "retries": parties.retries if parties else 0,
        "placed": executor.placed,
    }


def main() -> None:
    address, node_ip, url, root = sys.argv[1:5]
    ray.init(
        address=address, _node_ip_address=node_ip, runtime_env=runtime_env(), log_to_driver=False
    )
    try:
        out = {name: _grid(name, address, url, Path(root)) for name in ("first", "again")}
        nodes = {}
        for node in ray.nodes():
            for label in LABELS:
                if label in node["Resources"]:
                    nodes[label] = node["NodeID"]
        out["nodes"] = nodes
    finally:
        ray.shutdown()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
