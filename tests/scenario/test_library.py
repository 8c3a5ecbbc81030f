"""The built-in library: every scenario is valid, each of the eight SoCRATES domains has
five scenarios beyond the original three (40, as in the paper), every multi-issue one is
hard, and each beyond the original three is mediable.

Hard means the SoCRATES impasse filter (`disputelab.curation.impasse_filter`): rule
parties left to themselves fail to resolve it in at least two of three seeds, as
negotiators (the default disclosure) and, for the library, stating their whole
acceptable sets too. Mediable means a zone of possible agreement exists and the rule
mediator raises the final oracle consensus on average (a positive consensus gain).
"""

from __future__ import annotations

import asyncio
import re
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from disputelab.agents.utility import preference_table
from disputelab.curation import CurationConfig, impasse_filter
from disputelab.episode import Episode, Status
from disputelab.protocols.roundtable.evaluation.socrates import score_episode
from disputelab.scenario import Scenario, builtin_scenarios, load_scenario
from disputelab.scenario.library import builtin_ids, builtin_scenario, resolve_scenario
from disputelab.scenario.schema import SOCRATES_DOMAINS as DOMAINS
from tests.helpers import play

ORIGINAL = ("tenancy", "workplace", "community-centre")
SEEDS = (0, 1, 2)
BUDGET = 100
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

# The topic library; the built-ins with numeric terms and no topics belong to the
# protocols that bargain over amounts and are tested with them (tests/protocols/...).
ALL = sorted(sid for sid, s in builtin_scenarios().items() if s.topics)
NEW = [sid for sid in ALL if sid not in ORIGINAL]


def _file(sid: str) -> Path:
    return Path(str(resources.files("disputelab.scenarios") / f"{sid}.yaml"))


@cache
def _pairs(sid: str) -> tuple[tuple[Episode, Episode], ...]:
    """(unmediated, rule-mediated) episodes per seed, parties stating their whole
    acceptable sets (`disclosure: full`); shared by the tests below. The library was
    first written for that setting; the default disclosure is checked by the filter
    itself in `test_every_multi_issue_builtin_passes_the_impasse_filter_by_default`."""
    s = builtin_scenarios()[sid]
    return tuple(
        (play(s, "none", seed, BUDGET, "full"), play(s, "rule", seed, BUDGET, "full"))
        for seed in SEEDS
    )


def _final_consensus(episode: Episode) -> float:
    last = episode.turns[-1].consensus
    assert last is not None, "rule parties always give the oracle a consensus"
    return sum(last.values()) / len(last)


@pytest.mark.parametrize("sid", ALL)
def test_every_builtin_loads_from_its_own_file_and_validates(sid: str) -> None:
    path = _file(sid)
    assert path.exists(), f"{sid} must live in {path.name}, named after its id"
    s = load_scenario(path)  # raises on any schema or cross-field problem
    assert s == builtin_scenarios()[sid]
    assert KEBAB.match(s.id), f"{s.id} is not kebab-case"
    assert s.domain in DOMAINS
    assert s.language == "en"
    assert 2 <= len(s.parties) <= 4
    assert 3 <= len(s.topics) <= 5
    for topic in s.topics:
        assert 3 <= len(topic.options) <= 5, topic.id
    for party in s.parties:
        assert sum(party.weights.values()) == 100
        assert 0.0 <= party.fallback.utility < 1.0


def test_every_library_file_is_named_after_the_id_it_holds() -> None:
    files = sorted(
        entry.name.removesuffix(".yaml")
        for entry in resources.files("disputelab.scenarios").iterdir()
        if entry.name.endswith(".yaml")
    )
    assert list(builtin_ids()) == files
    assert [s.id for s in builtin_scenarios().values()] == files


def test_naming_one_builtin_parses_that_one_alone() -> None:
    builtin_scenario.cache_clear()
    try:
        assert resolve_scenario("workplace").id == "workplace"
        assert builtin_scenario.cache_info().currsize == 1
        with pytest.raises(KeyError):
            builtin_scenario("no-such-scenario")
    finally:
        builtin_scenario.cache_clear()


def test_the_library_holds_forty_scenarios_five_per_socrates_domain() -> None:
    library = builtin_scenarios()
    assert set(ORIGINAL) <= set(library)
    per_domain = {d: sorted(sid for sid in NEW if library[sid].domain == d) for d in DOMAINS}
    assert {d: len(ids) for d, ids in per_domain.items()} == dict.fromkeys(DOMAINS, 5)
    assert len(NEW) == 40


@pytest.mark.parametrize("sid", ALL)
def test_every_multi_issue_builtin_passes_the_impasse_filter_by_default(sid: str) -> None:
    """The curation filter itself, rule parties as negotiators (every run's default)."""
    verdict = asyncio.run(impasse_filter(builtin_scenarios()[sid], CurationConfig()))
    assert verdict.reason is None, f"{sid}: {verdict.reason} ({', '.join(verdict.outcomes)})"


def test_the_new_scenarios_mix_two_three_and_four_parties() -> None:
    library = builtin_scenarios()
    assert {len(library[sid].parties) for sid in NEW} >= {2, 3, 4}
    assert {len(library[sid].topics) for sid in NEW} >= {3, 4, 5}


def _zone_of_agreement(s: Scenario) -> int:
    """Packages every party accepts and values at least at its fallback."""
    ok: np.ndarray | None = None
    for party in s.parties:
        table = preference_table(s, party)
        mine = table.feasible & (table.utility >= party.fallback.utility - 1e-12)
        ok = mine if ok is None else ok & mine
    assert ok is not None
    return int(ok.sum())


@pytest.mark.parametrize("sid", NEW)
def test_a_new_scenario_has_a_zone_of_possible_agreement(sid: str) -> None:
    assert _zone_of_agreement(builtin_scenarios()[sid]) >= 1


@pytest.mark.parametrize("sid", NEW)
def test_a_new_scenario_passes_the_impasse_filter_with_full_disclosure(sid: str) -> None:
    unmediated = [u for u, _ in _pairs(sid)]
    resolved = sum(
        e.outcome is not None and e.outcome.status is Status.RESOLVED for e in unmediated
    )
    assert resolved <= len(SEEDS) - 2, (
        f"rule parties settled {sid} unaided in {resolved} of {len(SEEDS)} seeds"
    )


@pytest.mark.parametrize("sid", NEW)
def test_the_rule_mediator_raises_consensus_on_a_new_scenario(sid: str) -> None:
    pairs = _pairs(sid)
    raw = [_final_consensus(m) - _final_consensus(u) for u, m in pairs]
    gains = [score_episode(m, u)["consensus_gain"].value for u, m in pairs]
    assert sum(raw) / len(raw) > 0, f"final consensus mediated minus unmediated: {raw}"
    assert sum(gains) / len(gains) > 0, f"SoCRATES consensus gain per seed: {gains}"
