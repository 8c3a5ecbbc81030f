"""Does selection matter? Each method's remediator on the same held-out dialogues.

Methods: no remediator, zero-shot, random k from the pool (static per dialogue seed, as
vanilla ICL), retrieval (the k nearest pool items per violation), the stage-1 top k
(Top-VI, no traversal) and the value-impact set. Every method plays the same tasks and
seeds, none of them used in selection (test tasks are other variants, seeds are fresh),
at the paper's violation rate. Intervals resample tasks (a cluster bootstrap); the paired
differences of the value-impact set against random and retrieval are tested on task means
(Wilcoxon), the way the report's tables test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from disputelab.evaluation.inference import Key, cluster_bootstrap_ci, paired_scenario_test
from disputelab.evaluation.registry import EpisodeToScore, ScoringContext
from disputelab.evaluation.stats import Estimate, TestResult
from disputelab.llm.base import ChatModel
from disputelab.protocols.bilateral.agents.exemplars import Exemplar, ExemplarFile
from disputelab.protocols.bilateral.evaluation import score
from disputelab.protocols.bilateral.remediation.simulate import Cast, Method, play_once
from disputelab.protocols.bilateral.remediation.tasks import tasks

METRICS = ("reward", "deal", "normalised_price", "trust_deepened", "relationship_deepened")


def methods(pool: ExemplarFile, chosen: ExemplarFile, k: int, semantic: bool) -> list[Method]:
    """The arms compared, in table order."""
    by_id = {e.id: e for e in pool.exemplars}
    top: Sequence[Exemplar] = [by_id[i] for i in chosen.meta.get("top_vi", []) if i in by_id]
    arms = [
        Method("no remediator", "none"),
        Method("zero-shot", "zero-shot"),
        Method("random ICL", "random", pool=pool.exemplars, k=k),
        Method("retrieval ICL", "retrieval", pool=pool.exemplars, k=k, semantic=semantic),
    ]
    if top:
        arms.append(Method("top-VI (stage 1)", "set", tuple(top), k=k))
    arms.append(Method("value impact", "set", chosen.exemplars, k=k))
    return arms


@dataclass
class Comparison:
    scores: dict[str, dict[str, dict[Key, float]]] = field(default_factory=dict)
    tasks: int = 0
    episodes: int = 0

    def estimate(self, method: str, metric: str) -> Estimate:
        values = self.scores[method][metric]
        keys = sorted(values)
        return cluster_bootstrap_ci([values[k] for k in keys], [k[0] for k in keys])

    def difference(self, a: str, b: str, metric: str = "reward") -> tuple[Estimate, TestResult]:
        """a - b on paired dialogues, with a task-clustered CI and a task-level test."""
        xs, ys = self.scores[a][metric], self.scores[b][metric]
        keys = sorted(xs.keys() & ys.keys())
        diff = cluster_bootstrap_ci([xs[k] - ys[k] for k in keys], [k[0] for k in keys])
        return diff, paired_scenario_test(xs, ys)


async def compare(
    arms: Sequence[Method],
    cast: Cast,
    per_topic: int = 8,
    replicates: int = 4,
    seed: int = 0,
    judges: Sequence[ChatModel] = (),
) -> Comparison:
    """Every arm on `per_topic` held-out tasks per topic x `replicates` seeds each."""
    held_out = tasks(per_topic, start=500 + 100 * seed)
    out = Comparison(tasks=len(held_out))
    for arm in arms:
        table: dict[str, dict[Key, float]] = {m: {} for m in METRICS}
        for scenario in held_out:
            for r in range(replicates):
                run_seed = 900_000 + seed * 10_000 + r
                episode = await play_once(scenario, run_seed, arm, cast)
                out.episodes += 1
                scores = await score(EpisodeToScore(episode, scenario), ScoringContext(judges))
                for m in METRICS:
                    table[m][(scenario.id, r)] = scores[m].value
        out.scores[arm.name] = table
    return out


def comparison_markdown(result: Comparison, baselines: Sequence[str] = ()) -> str:
    """The comparison as a markdown table, then the paired differences."""
    head = "| method | " + " | ".join(METRICS) + " |"
    lines = [head, "|---|" + "---|" * len(METRICS)]
    for name in result.scores:
        cells = []
        for m in METRICS:
            e = result.estimate(name, m)
            half = (e.high - e.low) / 2 if e.has_interval else float("nan")
            cells.append(f"{e.mean:.3f} ± {half:.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"{result.tasks} held-out tasks (clusters), {result.episodes} episodes; "
        "± is the half-width of the 95% cluster-bootstrap CI over tasks.",
        "",
    ]
    for b in baselines:
        diff, test = result.difference("value impact", b)
        lines.append(
            f"- reward, value impact - {b}: {diff.mean:+.3f} "
            f"[{diff.low:+.3f}, {diff.high:+.3f}], Wilcoxon on {test.n} task means p = "
            f"{test.p_value:.3g}"
        )
    return "\n".join(lines) + "\n"
