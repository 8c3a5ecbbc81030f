"""The remediator paper's Table 1 layout for a price-negotiation experiment: one row per
method, and per topic the deal rate, the mean deal price, the trust and relationship
deepening rates and the reward R; then R over all topics with a CI clustered by scenario,
and a few violations as said and as the buyer heard them.

Decisions: Deal is the mean price over the episodes that reached a deal (as the released
code computes it; the paper's text says over all dialogues, which a no-deal price would
make meaningless); rates are percentages of all episodes (spec section 14.7). On a
`worlds:` axis each method has a row per parameter world ("... in the neutral world").
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from disputelab.evaluation.inference import MIN_CLUSTERS, Key
from disputelab.scenario.behaviour import WORLDS
from disputelab.store.sqlite import Store
from disputelab.tables.cells import estimate, estimate_text

LABELS = {
    "none": "Viol No-Remed.",
    "zero-shot": "PROMPT (zero-shot)",
    "random-icl": "Vanilla ICL (random)",
    "retrieval-icl": "Retrieval ICL",
}
EXAMPLES = 4  # violations shown as said and as heard


def method_label(mediator: str, config: dict[str, Any]) -> str:
    """A row's name: the remediator kind, with the exemplars its parameters name."""
    if float(config.get("violation_prob", 0.4)) == 0.0:
        return "Without Viol." + (f" ({mediator})" if mediator != "none" else "")
    if mediator == "remediator":
        return f"remediator ({config.get('exemplars', '?')})"
    return LABELS.get(mediator, mediator)


def _pct(xs: list[float]) -> str:
    xs = [x for x in xs if not math.isnan(x)]
    return f"{100 * sum(xs) / len(xs):.0f}" if xs else "-"


def _mean(xs: list[float], fmt: str) -> str:
    xs = [x for x in xs if not math.isnan(x)]
    return format(sum(xs) / len(xs), fmt) if xs else "-"


def _price_format(prices: list[float]) -> str:
    top = max((abs(p) for p in prices if not math.isnan(p)), default=0.0)
    return ",.0f" if top >= 1000 else ".2f"


def bilateral_markdown(store: Store, run_id: str, config: dict[str, Any]) -> str:
    # An experiment keeps its protocol parameters under `params`; a single run inlines them.
    config = {**config, **(config.get("params") or {})}
    rows: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(dict))
    rewards: dict[str, dict[Key, float]] = defaultdict(dict)
    examples: list[str] = []
    topics: list[str] = []
    for i, eid in enumerate(sorted(store.complete_episode_ids(run_id))):
        rec = store.load_episode(eid)
        ep = rec.episode
        label = method_label(ep.agents.get("mediator", "none"), config) + _world_of(eid)
        topic = ep.scenario_id
        topics += [topic] if topic not in topics else []
        values = {s.metric: s.value for s in store.scores(eid)}
        cell = rows[label][topic]
        for m in ("deal", "price", "trust_deepened", "relationship_deepened", "reward"):
            cell.setdefault(m, []).append(values.get(m, math.nan))
        rewards[label][(topic, i)] = values.get("reward", math.nan)
        examples += _examples(ep, len(examples))
    return _render(run_id, config, rows, rewards, topics, examples)


def _world_of(episode_id: str) -> str:
    """` in the WORLD world` for an episode of a `worlds:` axis (its mediator part reads
    `none~WORLD`), so each world's methods are rows of their own; '' otherwise."""
    _, tilde, world = episode_id.rsplit("/", 2)[-2].rpartition("~")
    return f" in the {world} world" if tilde else ""


def _order(label: str) -> tuple[int, int, str]:
    """Rows as the paper orders its methods, each method's worlds in the table's order."""
    order = ["Without Viol.", *LABELS.values()]
    base, _, world = label.partition(" in the ")
    at = order.index(base) if base in order else len(order)
    worlds = [f"{w} world" for w in WORLDS]
    return at, worlds.index(world) if world in worlds else -1, base


def _examples(ep: Any, have: int) -> list[str]:
    out: list[str] = []
    for t in ep.turns:
        if have + len(out) >= EXAMPLES or not t.delivered:
            continue
        heard = next(iter(t.delivered.values()))
        out.append(
            f"- {ep.scenario_id}, party turn {t.party_turn} ({t.stage}):\n  - said: {t.text}\n"
            f"  - heard: {heard}"
        )
    return out


def _render(
    run_id: str,
    config: dict[str, Any],
    rows: dict[str, dict[str, dict[str, list[float]]]],
    rewards: dict[str, dict[Key, float]],
    topics: list[str],
    examples: list[str],
) -> str:
    head = ["method"]
    for t in topics:
        head += [f"{t} Suc", f"{t} Deal", f"{t} Trust", f"{t} Rel", f"{t} R"]
    head.append("R, all topics")
    lines = [
        f"# Experiment `{run_id}` (price negotiation with norm violations)",
        "",
        "| " + " | ".join(head) + " |",
        "|---|" + "---|" * (len(head) - 1),
    ]
    for label in sorted(rows, key=_order):
        cells = [label]
        for t in topics:
            c = rows[label].get(t, {})
            prices = c.get("price", [])
            cells += [
                _pct(c.get("deal", [])),
                _mean(prices, _price_format(prices)),
                _pct(c.get("trust_deepened", [])),
                _pct(c.get("relationship_deepened", [])),
                _mean(c.get("reward", []), ".3f"),
            ]
        cells.append(estimate_text(estimate(rewards[label]), ".3f"))
        lines.append("| " + " | ".join(cells) + " |")
    if not rows:
        return "\n".join(lines) + "\n(no complete episodes yet)\n"
    lines += [
        "",
        "Suc, Trust and Rel: % of episodes with a deal, deepened trust, deepened relationship;",
        "Deal: mean price over deals; R: mean reward. R, all topics: mean ± half-width of the",
        f"95% cluster t CI over scenarios (n/a below {MIN_CLUSTERS} scenarios). Trust and",
        "relationship come from a judge when one scored the run, else from the rule buyer's",
        "hidden state (see each score's explanation). Violation rate: "
        f"{config.get('violation_prob')}.",
    ]
    if examples:
        lines += ["", "## Violations as said and as heard", "", *examples]
    return "\n".join(lines) + "\n"
