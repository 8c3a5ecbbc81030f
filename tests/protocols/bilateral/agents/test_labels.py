"""An exemplar's category and repair style read from its text by the stated rule, and the
template remediator using an exemplar without labels by what its text shows."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from disputelab.agents.base import PublicTurn, TurnContext
from disputelab.protocols.bilateral.agents.exemplars import (
    Exemplar,
    ExemplarFile,
    load_exemplars,
    repairs_category,
    save_exemplars,
    style_of,
)
from disputelab.protocols.bilateral.agents.labels import (
    CATEGORY_WORDS,
    STYLE_WORDS,
    infer,
    infer_category,
    infer_style,
)
from disputelab.protocols.bilateral.agents.norms import CATEGORIES, PHRASES
from disputelab.protocols.bilateral.agents.remediators import TemplateRemediator
from tests.helpers import scenario


@pytest.mark.parametrize(
    ("violation", "category"),
    [
        ("你这报价也太外行了，$40？", "insulting"),
        ("这个价格我们不考虑，别浪费时间。", "dismissive"),
        ("我只关心利润，低于$60不卖。", "self-serving"),
        ("相信我，其他买家出价更高。", "dishonest"),
        ("你们那边的客套就免了。", "culture"),
        ("Trust me, other buyers would pay double.", "dishonest"),
    ],
)
def test_the_category_is_the_one_whose_words_the_violation_uses(
    violation: str, category: str
) -> None:
    assert infer_category(violation)[0] == category


def test_a_tie_goes_to_the_more_severe_category_and_no_word_to_none() -> None:
    # One insulting word, one dismissive: insults weigh more (norms.SEVERITY).
    assert infer_category("你太天真了，免谈。")[0] == "insulting"
    # Two self-serving words outweigh one dismissive.
    assert infer_category("我只关心利润，免谈。")[0] == "self-serving"
    assert infer_category("$76，就这个数。") == ("", "no category word")


@pytest.mark.parametrize("category", CATEGORIES)
def test_the_rule_agents_own_phrases_are_heard_as_their_category(category: str) -> None:
    for phrase in PHRASES[category]["harsh"]:  # type: ignore[index]
        assert infer_category(f"{phrase} $50 per unit is my price.")[0] == category


def test_the_style_counts_only_what_the_rewrite_adds() -> None:
    violation = "很抱歉，这个价格太低了。"
    assert infer_style(violation, "很抱歉，这个价格我们接受不了。")[0] == "restate"
    assert infer_style("这个价格太低了。", "很抱歉，这个价格我们接受不了。")[0] == "apologise"


def test_the_strongest_repair_added_decides_and_a_lower_price_concedes() -> None:
    said = "你这个出价太低了，我们要$80。"
    assert infer_style(said, "抱歉，我理解您的预算，我们要$80。")[0] == "empathise"
    assert infer_style(said, "我理解您的预算，我们愿意长期合作，价格$80。")[0] == "alternatives"
    style, why = infer_style(said, "我理解您的预算，我们可以做到$75。")
    assert style == "concede" and "price 80 -> 75" in why


def test_every_inferred_label_says_how_it_was_had() -> None:
    labels = infer("我只关心利润，低于$60不卖。", "我们需要合理的利润，最低$60，希望您理解。")
    assert (labels.category, labels.style) == ("self-serving", "empathise")
    assert labels.source.startswith("inferred by rule lexicon/1")
    assert "利润" in labels.source and "理解" in labels.source


def test_the_lexicons_name_known_labels_only() -> None:
    assert set(CATEGORY_WORDS) == set(CATEGORIES)
    assert set(STYLE_WORDS) == {"concede", "alternatives", "empathise", "apologise"}


def _turn(i: int, speaker: str, text: str) -> PublicTurn:
    return PublicTurn(i, i + 1, speaker, "party", text)


def test_an_exemplar_without_labels_is_used_by_what_its_text_shows() -> None:
    """The remediator paper's exemplars carry no labels: the template remediator imitates
    the one whose violation reads as the same category, in the style its rewrite shows."""
    sc = scenario("product-sale")
    said = "Only an amateur would make an offer that feeble. $50 per unit is my price."
    dialogue = [_turn(0, "buyer", "I can offer $30 per unit."), _turn(1, "seller", said)]
    unlabelled = Exemplar(
        "z",
        "s",
        "",
        (),
        "你这个出价也太外行了，$30？",
        "不好意思，$30离我们的预期太远，我们愿意长期合作。",
    )
    assert repairs_category(unlabelled) == "insulting"
    assert style_of(unlabelled).name == "alternatives"
    rem = TemplateRemediator(sc, 0, "set")
    rem.prepare("set", (), [unlabelled], 8, False)
    out = asyncio.run(rem.remediate(dialogue, said, "insulting", TurnContext(2, 20, 2)))
    assert out.how.startswith("template alternatives after z")


def test_inferred_labels_and_notes_round_trip_and_old_files_read_the_same(
    tmp_path: Path,
) -> None:
    folder = tmp_path
    marked = Exemplar(
        "a", "s", "insulting", ("buyer: 你好",), "v", "r", "apologise", True, "rule", "f 1", ("n",)
    )
    plain = Exemplar("b", "s", "culture", (), "v", "r", "restate")
    path = save_exemplars(ExemplarFile("p", "pool", (marked, plain)), folder / "p.json")
    assert load_exemplars(path).exemplars == (marked, plain)
    # An exemplar with none of the new fields writes none of them.
    assert set(plain.to_dict()) == {
        "id", "scenario_id", "category", "history", "violation", "remediation", "style"
    }  # fmt: skip
