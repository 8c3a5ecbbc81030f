"""The rule agents' decision code holds no behavioural number of its own: every one is a
row of the behaviour table, so worlds, ablation and sensitivity reach it. That holds for
the rule policy and for the rule agents of the settlement protocol (its counsel, their
planner and its memory) and the bilateral protocol (its buyer and seller, and the
lexicon the buyer hears with). The numbers allowed here are not behaviour, and each says
why.

Left out, being no agent's response to a persona or condition: the settlement's money
model and value function (`model.py`, definitions and measurement), its neutral staff
and auditor's rules (the case's law, the same for every party), the red team's attack
grids (the adversary's design, set by `red_team_level`) and the game-agnostic tree
search; the bilateral remediators' and moderator's templates (the conditions
themselves, not a listener's response to them)."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import disputelab.agents.parties.rule_policy as rule_policy
import disputelab.protocols.bilateral.agents as bilateral_agents
import disputelab.protocols.settlement.agents as settlement_agents

POLICY = Path(rule_policy.__file__).parent
SETTLEMENT = Path(settlement_agents.__file__).parent
BILATERAL = Path(bilateral_agents.__file__).parent

# Numbers that are not behaviour: identities, clip bounds and counts.
NOT_BEHAVIOUR = {
    0: "a start, an index, a count, a clip bound (resentment is never negative) or an "
    "additive identity (0 and 0.0 are one key)",
    1: "a clip bound (shares and utilities top out at 1) or a multiplicative identity",
    1e-12: "the float tolerance of a utility comparison",
}
# Where a number is allowed in one file only, for a reason that holds there alone.
IN_FILE = {
    ("tone.py", 0.5): "the midpoint of a 0/1 switch of the table (on past half-way)",
    # Not moved yet: the support an option gets from being in a stated acceptable set
    # rather than backed. It is behaviour, and belongs in the table.
    ("reading.py", 0.5): "not yet moved to the behaviour table",
}
TWO = "the two sides, a regex group, the cents an amount is rounded to, or a mirror 2m - x"
# The protocols' decision code, by file: numbers allowed by value, and named definitions
# (a module-level constant, a function or a class) whose numbers are all allowed.
PROTOCOL_FILES: dict[Path, tuple[Mapping[float, str], Mapping[str, str]]] = {
    SETTLEMENT / "counsel.py": (
        {2: TWO},
        {
            "BOULWARE": "the boulware kind's curve: what the kind is, chosen by whoever "
            "seats it, never read off a persona (the rule kind's is the table's)",
            "CONCEDER": "the conceder kind's curve, likewise",
        },
    ),
    SETTLEMENT / "planner.py": (
        {2: TWO},
        {"PlanConfig": "the search settings' defaults, the protocol's own parameters"},
    ),
    SETTLEMENT / "planning.py": (
        {2: TWO + ", or the search's double step (its `big-step` move)"},
        {
            "MULTIPLIERS": "the planner's candidate moves: a setting of the method under "
            "test, the same whatever the party",
            "MIN_STEP_SHARE": "the smallest candidate step, likewise",
        },
    ),
    SETTLEMENT / "memory.py": (
        {
            2: "the fewest leaves that can be split into high and low",
            3: "how many memories of a kind retrieval returns: a setting of the method",
        },
        {
            "DELTA_SHARE": "RoT's split of leaves into high and low (its spec's delta)",
            "MAX_ENTRIES": "the memory bank's size bound",
            "STAGE_BOUNDS": "the buckets experience is filed under: a discretisation",
            "GAP_BOUNDS": "likewise, of the open gap",
            "MemoryFile": "storage: a stored row's column indices and the lock timeout",
        },
    ),
    BILATERAL / "rule.py": (
        {2: TWO},
        {
            "DEAD_ZONE": "the relational read-out's measurement, alike for every buyer",
            "DEAL_RELATION_BONUS": "likewise: how the outcome is read into the read-out",
            "WALKOUT_RELATION_COST": "likewise",
        },
    ),
    BILATERAL / "norms.py": (
        {},
        {
            "SEVERITY": "the lexicon's measure of how much offence a phrase's words carry, "
            "read alike by every listener; how much offence moves the buyer is the "
            "table's (bilateral.offence_per_reactivity)",
            "INTENSITY_SHARE": "likewise, for a softened phrase",
            "WARMTH": "likewise, for warmth (bilateral.trust_per_warmth moves the buyer)",
        },
    ),
}


def _literals(path: Path, named: Mapping[str, str] | None = None) -> list[tuple[float, int]]:
    """Every number in `path`, with its line, except those inside a module-level
    definition (constant, function, class) that `named` allows."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    allowed: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names = {node.name}
        else:
            continue
        if names & set(named or {}):
            allowed.update(id(n) for n in ast.walk(node))
    return [
        (node.value, node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
        and id(node) not in allowed
    ]


def _offenders(path: Path, values: Mapping[float, str], named: Mapping[str, str]) -> list[str]:
    return [
        f"{path.name}:{line}: {value!r}"
        for value, line in _literals(path, named)
        if value not in NOT_BEHAVIOUR and value not in values
    ]


def test_the_rule_policy_reads_every_behavioural_number_from_the_table() -> None:
    found = [
        f"{path.name}:{line}: {value!r}"
        for path in sorted(POLICY.glob("*.py"))
        for value, line in _literals(path)
        if value not in NOT_BEHAVIOUR and (path.name, value) not in IN_FILE
    ]
    assert not found, "numbers in the rule policy that are not in the behaviour table"


def test_settlement_and_bilateral_rule_agents_read_every_behavioural_number_from_the_table() -> (
    None
):
    found = [f for path, allowed in PROTOCOL_FILES.items() for f in _offenders(path, *allowed)]
    assert found == [], "numbers in protocol agents' decision code not in the behaviour table"


def test_every_named_exception_is_still_there() -> None:
    """An allow-list entry whose definition has gone allows nothing, and hides a typo."""
    for path, (_, named) in PROTOCOL_FILES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined = {
            t.id
            for node in tree.body
            if isinstance(node, ast.Assign | ast.AnnAssign)
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(t, ast.Name)
        } | {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
        assert set(named) <= defined, path.name


def test_the_check_finds_a_number_where_there_is_one(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("x = 0.25 * 1.0\n", encoding="utf-8")
    assert [v for v, _ in _literals(probe) if v not in NOT_BEHAVIOUR] == [0.25]


def test_the_check_finds_a_number_planted_in_a_protocol_agent(tmp_path: Path) -> None:
    # The bilateral buyer as shipped, with its old hard-coded offence sensitivity back.
    source = BILATERAL / "rule.py"
    text = source.read_text(encoding="utf-8")
    planted = text.replace(
        'b["bilateral.offence_per_reactivity"] * reactivity', "2.5 * reactivity", 1
    )
    assert planted != text
    probe = tmp_path / "rule.py"
    probe.write_text(planted, encoding="utf-8")
    values, named = PROTOCOL_FILES[source]
    assert _offenders(source, values, named) == []
    assert [f.split(": ")[1] for f in _offenders(probe, values, named)] == ["2.5"]
    # A planted number inside an allowed definition is allowed; anywhere else it is not.
    inside = text.replace("DEAD_ZONE = 0.1", "DEAD_ZONE = 0.15", 1)
    probe.write_text(inside, encoding="utf-8")
    assert _offenders(probe, values, named) == []
