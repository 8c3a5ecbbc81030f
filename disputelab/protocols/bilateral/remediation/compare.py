"""Does selection matter? Each method's remediator on the same held-out dialogues.

Methods: no remediator, zero-shot, random k from the pool (static per dialogue seed, as
vanilla ICL), retrieval (the k nearest pool items per violation), the stage-1 top k
(Top-VI, no traversal), any other saved sets asked for (one chosen from another pool)
and the value-impact set. Every method plays the same tasks and
seeds, none of them used in selection (test tasks are other variants, seeds are fresh),
at the paper's violation rate. Intervals are cluster t intervals over tasks; the paired
differences of the value-impact set against random and retrieval are tested on task means
(Wilcoxon), the way the report's tables test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from disputelab.evaluation.inference import Key, cluster_ci, paired_scenario_test
from disputelab.evaluation.registry import EpisodeToScore, ScoringContext
from disputelab.evaluation.stats import Estimate, TestResult, adjust
from disputelab.llm.base import ChatModel
from disputelab.protocols.base import get_protocol
from disputelab.protocols.bilateral.agents.exemplars import Exemplar, ExemplarFile
from disputelab.protocols.bilateral.evaluation import score
from disputelab.protocols.bilateral.protocol import BilateralParams
from disputelab.protocols.bilateral.remediation.simulate import PROTOCOL, Cast, Method, play_once
from disputelab.protocols.bilateral.remediation.tasks import tasks
from disputelab.protocols.bilateral.seeding import violation_stream
from disputelab.tables.cells import difference_text, estimate_text

METRICS = ("reward", "deal", "normalised_price", "trust_deepened", "relationship_deepened")


def methods(
    pool: ExemplarFile,
    chosen: ExemplarFile,
    k: int,
    semantic: bool,
    others: Sequence[ExemplarFile] = (),
) -> list[Method]:
    """The arms compared, in table order; `others` are saved sets played beside the
    value-impact set (one chosen from another pool, say), each as `set NAME`."""
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
    arms += [Method(f"set {o.name}", "set", o.exemplars, k=len(o.exemplars)) for o in others]
    arms.append(Method("value impact", "set", chosen.exemplars, k=k))
    return arms


@dataclass
class Comparison:
    scores: dict[str, dict[str, dict[Key, float]]] = field(default_factory=dict)
    tasks: int = 0
    episodes: int = 0
    # (task, replicate) -> the seller turns' violation draws every arm of it met.
    streams: dict[Key, tuple[str | None, ...]] = field(default_factory=dict)

    def distinct_streams(self) -> dict[int, int]:
        """Replicate -> how many distinct violation streams its tasks drew: the number of
        tasks when tasks are independent draws."""
        by_rep: dict[int, set[tuple[str | None, ...]]] = {}
        for (_, r), stream in self.streams.items():
            by_rep.setdefault(r, set()).add(stream)
        return {r: len(s) for r, s in sorted(by_rep.items())}

    def estimate(self, method: str, metric: str) -> Estimate:
        values = self.scores[method][metric]
        keys = sorted(values)
        return cluster_ci([values[k] for k in keys], [k[0] for k in keys])

    def difference(self, a: str, b: str, metric: str = "reward") -> tuple[Estimate, TestResult]:
        """a - b on paired dialogues, with a task-clustered CI and a task-level test."""
        xs, ys = self.scores[a][metric], self.scores[b][metric]
        keys = sorted(xs.keys() & ys.keys())
        diff = cluster_ci([xs[k] - ys[k] for k in keys], [k[0] for k in keys])
        return diff, paired_scenario_test(xs, ys)


def _run_seed(seed: int, replicate: int) -> int:
    """The episode seed of a replicate: fresh (none used in selection), shared by tasks;
    the task's own id goes into every stream it seeds (see `seeding`)."""
    return 900_000 + seed * 10_000 + replicate


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
    params = get_protocol(PROTOCOL).params(cast.params)
    if not isinstance(params, BilateralParams):  # the bilateral protocol's own, always
        raise TypeError(f"expected bilateral parameters, got {type(params).__name__}")
    for scenario in held_out:
        for r in range(replicates):
            out.streams[(scenario.id, r)] = violation_stream(
                scenario.id, _run_seed(seed, r), params.violation_prob, params.max_rounds
            )
    for arm in arms:
        table: dict[str, dict[Key, float]] = {m: {} for m in METRICS}
        for scenario in held_out:
            for r in range(replicates):
                episode = await play_once(scenario, _run_seed(seed, r), arm, cast)
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
            cells.append(estimate_text(result.estimate(name, m), ".3f"))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    streams = ", ".join(f"{n} (seed {r})" for r, n in result.distinct_streams().items())
    lines += [
        "",
        f"{result.tasks} held-out tasks (clusters), {result.episodes} episodes; "
        "± is the half-width of the 95% cluster t CI over tasks. Distinct violation "
        f"streams among the {result.tasks} tasks, per replicate seed: {streams}.",
        "",
    ]
    found = [(b, *result.difference("value impact", b)) for b in baselines]
    adjusted = adjust([test.p_value for _, _, test in found], "holm")
    for (b, diff, test), p in zip(found, adjusted, strict=True):
        lines.append(
            f"- reward, value impact - {b}: {difference_text(diff)}, Wilcoxon on {test.n} "
            f"task means p = {p:.3g} (Holm across the {len(found)} differences)"
        )
    return "\n".join(lines) + "\n"
