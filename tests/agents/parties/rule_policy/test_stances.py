"""`Stances`, `OpenStances` and `Caucus`: what a rule party would accept, what it says of
it at the table, and what it names to the mediator alone."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from disputelab.agents.parties.rule_memos import RuleMemos, build_candidates
from disputelab.agents.parties.rule_policy.choice import PackageChoice
from disputelab.agents.parties.rule_policy.stances import Caucus, OpenStances, Stances
from disputelab.agents.utility import preference_table
from disputelab.episode import Stance
from disputelab.scenario.behaviour import Behaviour
from tests.helpers import scenario

S = scenario("workplace")
TABLE = preference_table(S, S.parties[0])
CAND = build_candidates(TABLE, "compromising")
FEASIBLE = st.sampled_from(CAND.packages)


def _utility(pkg: tuple[int, ...]) -> float:
    return sum(TABLE.w[j] * TABLE.v[j][o] for j, o in enumerate(pkg))


def _stood(pkg: tuple[int, ...], target: float, dug_in: bool = False) -> Stances:
    truth = Stances(TABLE, CAND, RuleMemos())
    # The stances' memo keys on how many candidates the target admits.
    prefix = PackageChoice(TABLE, CAND, 0.5, 0.3, False).prefix(target)
    truth.take(pkg, dug_in, prefix, target, _utility(pkg))
    return truth


def _swap(pkg: tuple[int, ...], j: int, option: str) -> tuple[int, ...]:
    return (*pkg[:j], TABLE.index[j][option], *pkg[j + 1 :])


@given(pkg=FEASIBLE, target=st.floats(0, 1))
def test_truthful_stances_back_the_package_and_accept_exactly_what_keeps_the_target(
    pkg: tuple[int, ...], target: float
) -> None:
    target = min(target, _utility(pkg))  # it stands on packages worth its target
    stances = _stood(pkg, target).current
    for j, topic in enumerate(TABLE.topic_ids):
        s = stances[topic]
        assert s.option == TABLE.option_ids[j][pkg[j]]
        assert s.option in s.acceptable
        for option in TABLE.option_ids[j]:
            swapped = _swap(pkg, j, option)
            keeps = TABLE.ok[j][swapped[j]] and _utility(swapped) >= target - 1e-9
            assert (option in s.acceptable) == keeps or abs(_utility(swapped) - target) < 1e-9


@given(pkg=FEASIBLE)
def test_dug_in_it_accepts_only_what_it_backs(pkg: tuple[int, ...]) -> None:
    for s in _stood(pkg, 0.0, dug_in=True).current.values():
        assert s.acceptable == (s.option,)


def test_full_disclosure_states_the_truth() -> None:
    truth = _stood(CAND.packages[3], 0.2)
    said = OpenStances(TABLE, CAND, RuleMemos(), full=True)
    assert said.stated(truth) == truth.current
    assert said.rejections(CAND.packages[0], truth.current) == []


@given(path=st.lists(FEASIBLE, min_size=1, max_size=8), target=st.floats(0, 1))
def test_a_negotiator_states_only_concessions_it_made_and_would_still_take(
    path: list[tuple[int, ...]], target: float
) -> None:
    said = OpenStances(TABLE, CAND, RuleMemos(), full=False)
    backed: list[set[str]] = [set() for _ in TABLE.topic_ids]
    for pkg in path:
        truth = _stood(pkg, min(target, _utility(pkg)))
        said.concede(pkg)
        for j, i in enumerate(pkg):
            backed[j].add(TABLE.option_ids[j][i])
        stated = said.stated(truth)
        for j, topic in enumerate(TABLE.topic_ids):
            s, true = stated[topic], truth.current[topic]
            assert s.option == true.option and s.option in s.acceptable
            assert set(s.acceptable) <= backed[j] & set(true.acceptable)


def test_concessions_are_kept_in_the_order_they_were_made() -> None:
    said = OpenStances(TABLE, CAND, RuleMemos(), full=False)
    first, second = CAND.packages[0], CAND.packages[-1]
    said.concede(first)
    said.concede(first)  # nothing new
    said.concede(second)
    for j in range(len(TABLE.topic_ids)):
        made = list(dict.fromkeys([TABLE.option_ids[j][first[j]], TABLE.option_ids[j][second[j]]]))
        assert list(said.conceded[j]) == made


def test_a_refusal_names_the_options_it_would_not_take() -> None:
    truth = _stood(CAND.packages[0], 1.0)  # its best package, nothing else will do
    said = OpenStances(TABLE, CAND, RuleMemos(), full=False)
    refused = CAND.packages[-1]
    reasons = said.rejections(refused, truth.current)
    expected = [
        (topic, TABLE.option_ids[j][refused[j]])
        for j, topic in enumerate(TABLE.topic_ids)
        if TABLE.option_ids[j][refused[j]] not in truth.current[topic].acceptable
    ]
    assert reasons == expected and reasons


def _caucus(share: float, truthfulness: float, seed: str = "0:p:caucus") -> Caucus:
    b = {"disclosure.caucus_share": share, "disclosure.caucus_truthfulness": truthfulness}
    return Caucus(Behaviour.of(b), seed)


def _bare(truth: dict[str, Stance]) -> dict[str, Stance]:
    """Only the options backed, stated."""
    return {t: Stance(s.option, (s.option or "",)) for t, s in truth.items()}


def _held_back() -> tuple[dict[str, Stance], dict[str, Stance]]:
    """Truthful stances with something acceptable, and the bare option stated."""
    truth = _stood(CAND.packages[0], 0.0).current
    return truth, _bare(truth)


def test_a_share_of_zero_names_nothing() -> None:
    truth, stated = _held_back()
    for s in _caucus(0.0, 1.0).named(TABLE, truth, stated).values():
        assert s.acceptable == ()


def test_a_whole_truthful_share_names_every_acceptable_option_held_back() -> None:
    truth, stated = _held_back()
    named = _caucus(1.0, 1.0).named(TABLE, truth, stated)
    for topic, s in named.items():
        assert s.option == truth[topic].option
        assert set(s.acceptable) == set(truth[topic].acceptable) - set(stated[topic].acceptable)


def test_an_untruthful_party_bluffs_where_it_can() -> None:
    truth = _stood(CAND.packages[0], 0.6).current
    named = _caucus(1.0, 0.0).named(TABLE, truth, _bare(truth))
    bluffs = [
        o for topic, s in named.items() for o in s.acceptable if o not in truth[topic].acceptable
    ]
    assert bluffs


def test_caucus_draws_follow_their_own_seed() -> None:
    truth, stated = _held_back()
    a = _caucus(0.5, 0.5, "3:tenant:caucus").named(TABLE, truth, stated)
    b = _caucus(0.5, 0.5, "3:tenant:caucus").named(TABLE, truth, stated)
    assert a == b
