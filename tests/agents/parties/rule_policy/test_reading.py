"""`TableReading`: what a rule party has read at the table, turn by turn."""

from __future__ import annotations

from disputelab.agents.base import PublicTurn
from disputelab.agents.parties.rule_memos import ReadMemo, RuleMemos
from disputelab.agents.parties.rule_policy.reading import TableReading, as_package, read_stances
from disputelab.agents.parties.rule_policy.resentment import Resentment
from disputelab.agents.utility import preference_table
from disputelab.episode import Stance
from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR
from tests.helpers import scenario

S = scenario("workplace")
ME, OTHERS = S.parties[0].id, [p.id for p in S.parties[1:]]
TABLE = preference_table(S, S.parties[0])
TOPICS = TABLE.topic_ids
# Per topic, the option this party values most.
BEST = tuple(max(range(len(v)), key=v.__getitem__) for v in TABLE.v)


def _stances(option: int | tuple[int, ...]) -> dict[str, Stance]:
    """Every topic's `option`-th option (or per topic, its own) backed, and the one
    after it acceptable too."""
    out = {}
    for j, topic in enumerate(TOPICS):
        opts = TABLE.option_ids[j]
        i = option if isinstance(option, int) else option[j]
        out[topic] = Stance(opts[i], (opts[i], opts[(i + 1) % len(opts)]))
    return out


def _said(
    index: int, speaker: str, option: int | tuple[int, ...], tone: str = "neutral"
) -> PublicTurn:
    stances = _stances(option)
    return PublicTurn(index, index, speaker, "party", "...", stances, tone=tone)  # type: ignore[arg-type]


def _reading(reads: ReadMemo | None = None, memos: RuleMemos | None = None) -> TableReading:
    return TableReading(TABLE, ME, memos or RuleMemos(), reads)


def _mood() -> Resentment:
    return Resentment(DEFAULT_BEHAVIOUR, 1.0, 0.5)


def test_support_is_half_a_point_for_each_acceptable_option_and_half_for_the_backed_one() -> None:
    backed, support, reading_id = read_stances(TABLE, _stances(0), 7)
    assert backed == tuple(0 for _ in TOPICS) and reading_id == 7
    base = 0
    for j in range(len(TOPICS)):
        row = support[base : base + len(TABLE.option_ids[j])]
        assert row[0] == 1.0 and row[1] == 0.5 and sum(row) == 1.5
        base += len(TABLE.option_ids[j])


def test_unknown_options_and_missing_topics_lend_no_support() -> None:
    stances = {TOPICS[0]: Stance("no such option", ("nor this",))}
    backed, support, _ = read_stances(TABLE, stances, 0)
    assert backed == tuple(None for _ in TOPICS)
    assert support.sum() == 0.0


def test_a_choice_is_a_package_only_if_it_names_a_known_option_for_every_topic() -> None:
    first = {t: TABLE.option_ids[j][0] for j, t in enumerate(TOPICS)}
    assert as_package(TABLE, first) == tuple(0 for _ in TOPICS)
    assert as_package(TABLE, {**first, TOPICS[1]: "unknown"}) is None
    assert as_package(TABLE, {TOPICS[0]: TABLE.option_ids[0][0]}) is None


def test_it_reads_the_others_latest_turns_never_its_own_and_each_turn_once() -> None:
    reading, mood = _reading(), _mood()
    dialogue = [_said(0, ME, 1), _said(1, OTHERS[0], 0), _said(2, OTHERS[1], 2)]
    assert reading.observe(dialogue, mood) is None
    assert list(reading.latest) == OTHERS
    assert reading.backed[OTHERS[0]] == tuple(0 for _ in TOPICS)
    assert reading.seen == 3
    dialogue.append(_said(3, OTHERS[0], 1))
    reading.observe(dialogue, mood)
    assert reading.latest[OTHERS[0]].turn_index == 3
    assert reading.backed[OTHERS[0]] == tuple(1 for _ in TOPICS)


def test_a_mediators_turn_calms_and_its_last_proposal_is_answered() -> None:
    reading, mood = _reading(), _mood()
    mood.level = 1.0
    first = {t: TABLE.option_ids[j][0] for j, t in enumerate(TOPICS)}
    second = {t: TABLE.option_ids[j][1] for j, t in enumerate(TOPICS)}
    dialogue = [
        PublicTurn(0, 0, "mediator", "mediator", "...", proposal=first),
        PublicTurn(1, 0, "mediator", "mediator", "...", proposal=second),
    ]
    assert reading.observe(dialogue, mood) == tuple(1 for _ in TOPICS)
    assert mood.level < 1.0


def test_hostility_at_the_table_stirs_resentment_and_a_calm_restatement_does_not() -> None:
    reading, mood = _reading(), _mood()
    reading.observe([_said(0, OTHERS[0], BEST), _said(1, OTHERS[0], BEST)], mood)
    assert mood.level == 0.0  # it backs what this party wants most, and says so again
    hostile = _said(2, OTHERS[0], BEST, "hostile")
    reading.observe([_said(0, OTHERS[0], BEST), _said(1, OTHERS[0], BEST), hostile], mood)
    assert mood.level > 0.0


def test_what_was_said_is_read_once_per_run_and_once_per_episode() -> None:
    memos = RuleMemos()
    reads: ReadMemo = {}
    one, two = _reading(reads, memos), TableReading(TABLE, OTHERS[1], memos, reads)
    dialogue = [_said(0, OTHERS[0], 0)]
    one.observe(dialogue, _mood())
    two.observe(dialogue, _mood())
    assert one.read_ids == two.read_ids  # one reading, shared by the episode's parties
    other_episode = _reading(None, memos)
    other_episode.observe([_said(5, OTHERS[0], 0)], _mood())  # the same words, elsewhere
    assert other_episode.read_ids == one.read_ids
    another_run = _reading()
    another_run.observe(dialogue, _mood())
    assert another_run.backed == one.backed


def test_a_common_package_is_one_every_other_party_backs_in_full() -> None:
    reading, mood = _reading(), _mood()
    assert reading.common_package() is None  # nobody has spoken
    reading.observe([_said(0, OTHERS[0], 1)], mood)
    assert reading.common_package() == tuple(1 for _ in TOPICS)  # all who spoke agree
    reading.observe([_said(0, OTHERS[0], 1), _said(1, OTHERS[1], 2)], mood)
    assert reading.common_package() is None
    partial = PublicTurn(2, 2, OTHERS[1], "party", "...", {TOPICS[0]: Stance("x", ())})
    reading.observe([_said(0, OTHERS[0], 1), _said(1, OTHERS[1], 1), partial], mood)
    assert reading.common_package() is None  # a topic it backs nothing on
