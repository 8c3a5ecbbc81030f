"""Embedding similarity: real model when the `embed` extra is installed, else a clear NaN."""

from __future__ import annotations

import math

import pytest

from disputelab.evaluation.embedding import embedding_available, embedding_similarity

REASON = embedding_available()


@pytest.mark.slow  # loads the sentence-embedding model
@pytest.mark.skipif(REASON is not None, reason=f"embedding model absent: {REASON}")
def test_similar_texts_score_higher_than_unrelated_ones() -> None:
    same = embedding_similarity(
        "The landlord must repair the damp wall.",
        "The damp wall has to be repaired by the landlord.",
    )
    other = embedding_similarity(
        "The landlord must repair the damp wall.", "Quarterly revenue grew by four percent."
    )
    assert same.value > 0.7 > other.value
    assert embedding_similarity("x", "x").value == pytest.approx(1.0, abs=1e-5)


@pytest.mark.skipif(REASON is None, reason="the embedding model is installed")
def test_without_the_extra_the_metric_is_nan_and_says_how_to_install() -> None:
    r = embedding_similarity("a", "b")
    assert math.isnan(r.value) and "disputelab[embed]" in r.explanation
