"""Near-duplicate seeds: the similarity maths, and where the threshold falls on real
seeds."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from disputelab.curation.dedup import NearDuplicates, jaccard, shingles

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
words = st.lists(st.sampled_from(["mill", "river", "fish", "pay", "the", "a", "fee"]), max_size=30)


@given(words, words)
def test_similarity_is_symmetric_and_between_nothing_and_everything(
    a: list[str], b: list[str]
) -> None:
    sa, sb = shingles(" ".join(a)), shingles(" ".join(b))
    assert jaccard(sa, sb) == jaccard(sb, sa)
    assert 0.0 <= jaccard(sa, sb) <= 1.0


@given(words.filter(bool))
def test_a_text_is_wholly_like_itself_whatever_its_case_and_spacing(a: list[str]) -> None:
    text = " ".join(a)
    assert jaccard(shingles(text), shingles("  " + text.upper().replace(" ", "\n"))) == 1.0


def test_two_empty_texts_are_not_called_the_same() -> None:
    assert jaccard(shingles(""), shingles("...")) == 0.0


def seed_text(folder: str, name: str) -> str:
    return (EXAMPLES / folder / name).read_text(encoding="utf-8")


def test_a_lightly_edited_copy_is_caught_and_different_disputes_are_not() -> None:
    seen = NearDuplicates()
    names = ["clinic-closure.txt", "flat-deposit.txt", "river-discharge.txt"]
    assert [seen.match(n, seed_text("curation-seeds", n)) for n in names] == [None] * 3
    copy = seen.match("again", seed_text("curation-checks", "clinic-closure-again.txt"))
    assert copy is not None and copy[0] == "clinic-closure.txt" and copy[1] > 0.8
    # The example seeds are far apart: the threshold has a wide margin on both sides.
    texts = [shingles(seed_text("curation-seeds", n)) for n in names]
    assert max(jaccard(a, b) for i, a in enumerate(texts) for b in texts[i + 1 :]) < 0.05


def test_a_threshold_above_one_lets_even_a_copy_through() -> None:
    seen = NearDuplicates(threshold=1.01)
    text = seed_text("curation-seeds", "river-discharge.txt")
    assert seen.match("a", text) is None and seen.match("b", text) is None
