"""From a model's flat draft to a Scenario: ids, integer weights, and every fault listed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.curation import Draft, Seed, to_scenario
from disputelab.curation.recast import DraftProblems, draft_schema, integer_weights
from tests.curation import drafts

SEED = Seed("cafe-row", "Café row", "A café stopped paying its baker.", "cafe.txt")


@given(st.lists(st.integers(1, 100), min_size=1, max_size=4))
def test_weights_become_positive_integers_summing_to_100(raw: list[int]) -> None:
    out = integer_weights(raw)
    assert sum(out) == 100 and all(w >= 1 for w in out)
    # Order of importance survives the rounding.
    for i in range(len(raw)):
        for j in range(len(raw)):
            if raw[i] > raw[j]:
                assert out[i] >= out[j]


def test_weights_that_do_not_sum_to_100_are_rescaled() -> None:
    d = drafts.hard()
    for stance, w in zip(d["parties"][0]["stances"], [4, 3, 2, 1], strict=True):
        stance["weight"] = w
    s = to_scenario(Draft.model_validate(d), SEED)
    assert s.parties[0].weights == {"REFUND": 40, "INVOICES": 30, "PRICE": 20, "REVIEW": 10}


def test_small_slips_are_mended_in_code_rather_than_re_asked() -> None:
    d = drafts.hard()
    d["topics"][0]["code"] = "refund"
    d["topics"][0]["options"][0] = "(A) Full refund and a free week"
    d["topics"][0]["options"][1] = "B. Full refund"
    d["parties"][0]["stances"][0]["topic"] = "Refund"
    d["parties"][0]["stances"][0]["ranking"] = ["a", "b", "c"]
    d["parties"][1]["stances"][0]["topic"] = "REFUND "
    seed = Seed("x", "t", "text", "x.txt", domain="legal")
    s = to_scenario(Draft.model_validate(d), seed)
    assert s.domain == "legal" and s.topics[0].id == "REFUND"
    assert [o.label for o in s.topics[0].options][:2] == [
        "Full refund and a free week",
        "Full refund",
    ]
    assert s.parties[0].preferences["REFUND"].ranking == ["A", "B", "C"]


def test_every_fault_of_a_draft_is_listed_with_its_place() -> None:
    d = drafts.hard()
    d["parties"][0]["stances"][3]["topic"] = "APOLOGY"
    d["parties"][1]["stances"][1]["ranking"] = ["A", "B"]  # C now unlisted
    for stance in d["parties"][1]["stances"]:
        stance["weight"] = 25
    with pytest.raises(DraftProblems) as err:
        to_scenario(Draft.model_validate(d), SEED)
    problems = err.value.problems
    assert any(
        p.startswith("parties[0].stances[3].topic: 'APOLOGY' is not a topic code") for p in problems
    )
    assert "parties[0].stances: no stance on REVIEW" in problems
    assert any("every weight is 25" in p for p in problems)
    d["parties"][0]["stances"][3]["topic"] = "REVIEW"
    d["parties"][1]["stances"][1]["weight"] = 40
    with pytest.raises(DraftProblems) as err:
        to_scenario(Draft.model_validate(d), SEED)
    assert err.value.problems == [
        "parties[1].preferences.INVOICES: option C neither ranked nor unacceptable; "
        "list it in one of them"
    ]


def test_the_schema_sent_to_the_model_accepts_the_drafts_it_describes() -> None:
    schema = draft_schema()
    assert set(schema["required"]) == set(Draft.model_fields)
    party = schema["properties"]["parties"]["items"]
    assert party["properties"]["strategy"]["enum"][0] == "competing"
    assert schema["properties"]["domain"]["enum"][3] == "business-to-business"


def test_a_party_with_no_stance_is_a_listed_problem_not_a_crash() -> None:
    # The embedded 135M model wrote a party with an empty stance list; the recast ended
    # in "ZeroDivisionError: integer modulo by zero" instead of naming the fault.
    d = drafts.hard()
    d["parties"][0]["stances"] = []
    with pytest.raises(DraftProblems, match=r"parties\[0\]\.stances: no stance on"):
        to_scenario(Draft.model_validate(d), SEED)
