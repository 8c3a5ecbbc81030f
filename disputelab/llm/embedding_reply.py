"""What an OpenAI-compatible `/embeddings` endpoint replies, read strictly enough that a
broken reply is a clear error and leniently enough for servers that leave out the
optional fields (`object`, `usage`), which the SDK's own types insist on."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from disputelab.llm.base import ModelError, TransientModelError, token_count

# What to tell a user whose endpoint embeds nothing: the in-process model is one choice.
CHOOSE_LOCAL = (
    "to rank memories with the in-process model instead, give --embeddings-model local "
    "(models: {embeddings: local} in a spec)"
)


class EmbeddingsUnsupported(ModelError):
    """The endpoint serves no embeddings, or not for this model: retrying cannot help,
    and falling back to another embedding behind the user's back would change the run."""


@dataclass(frozen=True)
class EmbeddingReply:
    vectors: list[list[float]]  # one per text, in the order they were sent
    input_tokens: int | None = None


def unsupported(name: str, status: int, reason: str) -> EmbeddingsUnsupported | None:
    """The error for a refusal that says the endpoint does not embed: no such route
    (404, 405), not implemented (501, llama.cpp's server without `--embeddings`), or a
    400 that names embeddings (a chat model asked to embed). None for other refusals."""
    embeds = "embed" in reason.lower()
    if status in (404, 405, 501) or (status == 400 and embeds):
        return EmbeddingsUnsupported(
            f"{name} serves no embeddings ({status} from /embeddings: {reason}); {CHOOSE_LOCAL}"
        )
    return None


def _number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _vector(name: str, item: Any) -> list[float]:
    values = item.get("embedding") if isinstance(item, dict) else None
    if not isinstance(values, list) or not values or not all(_number(v) for v in values):
        # A base64 string, or nothing: we ask for floats, so this is the server's fault.
        raise TransientModelError(f"{name}: an embedding in the reply is not a list of numbers")
    out = [float(v) for v in values]
    if not all(math.isfinite(v) for v in out):
        raise TransientModelError(f"{name}: an embedding in the reply holds NaN or infinity")
    return out


def embedding_reply(name: str, reply: Any, n: int) -> EmbeddingReply:
    """The vectors of a parsed `/embeddings` reply to `n` texts, by their `index`."""
    data = reply.get("data") if isinstance(reply, dict) else None
    if not isinstance(data, list) or len(data) != n:
        got = len(data) if isinstance(data, list) else "no"
        raise TransientModelError(f"{name}: asked to embed {n} texts, the reply held {got}")
    indexed = sorted(
        enumerate(data), key=lambda p: p[1].get("index", p[0]) if isinstance(p[1], dict) else 0
    )
    vectors = [_vector(name, item) for _, item in indexed]
    if len({len(v) for v in vectors}) > 1:
        raise TransientModelError(f"{name}: the reply's embeddings differ in length")
    usage = reply.get("usage")
    tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return EmbeddingReply(vectors, token_count("prompt_tokens", tokens)[0])
