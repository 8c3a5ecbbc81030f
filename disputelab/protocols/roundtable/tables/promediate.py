"""ProMediate's Table 2 for a roundtable experiment: mode x method, with CC, TLE, RL, ME
and MI. Modes are the experiment's conditions (a conflict mode such as
`posture:competing`, or `general`), methods its mediators (`none` is NoAgent).

It appears when the experiment ran the `promediate` evaluator (and, for MI, the
`mediator-intelligence` one); its consensus values come from the tracker the
`promediate` evaluator read, which the table names."""

from __future__ import annotations

from disputelab.evaluation.promediate import PROMEDIATE_METRICS
from disputelab.store.sqlite import Store
from disputelab.tables.grids import Scores, experiment_scores, metric_table, source_line

MI = "mediator-intelligence"
METRICS = (*PROMEDIATE_METRICS, "mediator_intelligence")


def promediate_markdown(store: Store, run_id: str, conditions: list[str], tracker: str) -> str:
    """The table, or "" when the experiment has no ProMediate scores."""
    # The promediate evaluator is stored under the tracker it read; an experiment's
    # evaluators run with the self-report tracker unless told otherwise.
    for source in dict.fromkeys((tracker, "self-report")):
        stored = f"promediate:{source}"
        scores = experiment_scores(store, run_id, (stored, MI))
        main = scores[stored]
        if any(v for cases in main.values.values() for v in cases.values()):
            break
    else:
        return ""
    _merge(main, scores[MI])
    table, notes = metric_table(main, conditions, METRICS)
    lines = [
        "## Mode x method (ProMediate Table 2)",
        "",
        source_line(source),
        "",
        *table,
        "",
        "consensus_change (CC), topic_level_efficiency (TLE) and mediator_effectiveness "
        "(ME, two-point slopes as the released code; `_fitted`: least-squares slopes over "
        "each 5-line window, as the paper words it) in %, response_latency (RL) in "
        "dialogue lines, mediator_intelligence (MI) "
        "1-5; modes are the conditions, methods the mediators (none = NoAgent). Cells and "
        "tests as in the first table. Under `party_style: general` (the promediate "
        "preset's Medium level) a posture or strategy condition changes no party: set "
        "`party_style: persona` for the other modes.",
        *(x for n in notes for x in ("", n)),
    ]
    return "\n".join(lines) + "\n"


def _merge(into: Scores, other: Scores) -> None:
    """Add `other`'s metrics (MI) to `into`'s cells, with their reasons."""
    for cell, cases in other.values.items():
        for key, values in cases.items():
            into.values[cell].setdefault(key, {}).update(values)
            for metric, why in other.why.get(cell, {}).get(key, {}).items():
                into.why[cell][key][metric] = why
