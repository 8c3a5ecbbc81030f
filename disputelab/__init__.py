"""disputelab: simulate dispute mediation and negotiation, run experiments, score outcomes.

    import disputelab as dl

    result = dl.run("tenancy", mediator="rule")   # one episode and its unmediated twin
    print(result.metrics())                       # pandas: metric x arm
    exp = dl.experiment({"name": "demo", "scenarios": ["tenancy", "workplace"]})
    print(exp.tables())                           # the protocol's tables, as markdown

The names below come from `disputelab.api`, the one front door the command line uses
too. They are imported on first use, so `import disputelab` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "DisputelabError",
    "ExperimentPlan",
    "ExperimentResult",
    "PlanError",
    "RunPlan",
    "RunResult",
    "Scenario",
    "Store",
    "__version__",
    "compare",
    "episode_frame",
    "evaluate",
    "evaluate_async",
    "experiment",
    "experiment_async",
    "load_scenario",
    "open_models",
    "open_store",
    "plan_experiment",
    "plan_run",
    "report",
    "run",
    "run_async",
    "runs_frame",
]

# Where each public name is defined; `disputelab.api` re-exports them all.
_HOMES = {
    "DisputelabError": "disputelab.errors",
    "PlanError": "disputelab.errors",
    "ExperimentPlan": "disputelab.plan.experiment",
    "RunPlan": "disputelab.plan.run",
    "RunResult": "disputelab.experiments.episodes",
    "Scenario": "disputelab.scenario.schema",
    "Store": "disputelab.store.sqlite",
}


def __getattr__(name: str) -> Any:
    if name not in __all__ or name == "__version__":
        raise AttributeError(f"module 'disputelab' has no attribute {name!r}")
    value = getattr(import_module(_HOMES.get(name, "disputelab.api")), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from disputelab.api import (
        ExperimentResult,
        compare,
        episode_frame,
        evaluate,
        evaluate_async,
        experiment,
        experiment_async,
        load_scenario,
        open_models,
        open_store,
        plan_experiment,
        plan_run,
        report,
        run,
        run_async,
        runs_frame,
    )
    from disputelab.errors import DisputelabError, PlanError
    from disputelab.experiments.episodes import RunResult
    from disputelab.plan.experiment import ExperimentPlan
    from disputelab.plan.run import RunPlan
    from disputelab.scenario.schema import Scenario
    from disputelab.store.sqlite import Store
