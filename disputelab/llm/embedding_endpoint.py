"""Embeddings from an OpenAI-compatible endpoint's `/embeddings`, as ProMediate takes them.

An `EndpointEmbedder` asks the endpoint a run's chat calls go to (or another one named
for the `embeddings` role) through that endpoint's own limits and retries, so embedding
requests and chat calls share one budget of calls in flight. Texts are sent in batches;
each text's vector is filed in the response cache under the model and the text, so a
re-run asks for nothing, and a text already asked for by another party (the same event
reaches every party at once) is waited for rather than sent again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from disputelab.llm.cache import ReplyCache, embedding_key
from disputelab.llm.embedding_reply import EmbeddingReply
from disputelab.llm.wrappers import Limited, Prices, Retrying, RoleUsage

BATCH = 64  # texts per request: well under every server's limit on inputs
MEMO = 1 << 14  # vectors kept in memory per endpoint (the cache file keeps them all)


@runtime_checkable
class EmbeddingBackend(Protocol):
    name: str

    async def embed(self, texts: Sequence[str]) -> EmbeddingReply: ...


def unit_rows(vectors: Sequence[Sequence[float]]) -> npt.NDArray[np.float64]:
    """The vectors as unit-length rows: salience is a dot product, and not every server
    normalises its embeddings (OpenAI's are; a local server's may not be)."""
    out = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    unit: npt.NDArray[np.float64] = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
    return unit


class EndpointEmbedder:
    """Unit vectors for texts from an endpoint; `kind` names the endpoint (redacted)."""

    def __init__(
        self,
        backend: EmbeddingBackend,
        limited: Limited,
        retrying: Retrying,
        cache: ReplyCache | None,
        usage: RoleUsage,
        prices: Prices,
    ) -> None:
        self.backend = backend
        self.kind = backend.name
        self.limited = limited
        self.retrying = retrying
        self.cache = cache
        self.usage = usage
        self.prices = prices
        self._memo: dict[str, npt.NDArray[np.float64]] = {}
        self._asked: dict[str, asyncio.Future[npt.NDArray[np.float64] | None]] = {}

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float64]:
        if not texts:
            return np.zeros((0, 0))
        wanted = list(dict.fromkeys(texts))
        found = {t: v for t in wanted if (v := await self._known(t)) is not None}
        waiting = {t: self._asked[t] for t in wanted if t not in found and t in self._asked}
        missing = [t for t in wanted if t not in found and t not in waiting]
        if not missing and not waiting:
            self.usage.cached += 1
        if missing:
            found |= await self._ask(missing)
        for text, pending in waiting.items():
            shared = await asyncio.shield(pending)
            # The first asker failed: this caller asks for itself (and fails in turn).
            found[text] = shared if shared is not None else (await self._ask([text]))[text]
        stacked: npt.NDArray[np.float64] = np.stack([found[t] for t in texts])
        return stacked

    async def _known(self, text: str) -> npt.NDArray[np.float64] | None:
        vector = self._memo.get(text)
        if vector is None and self.cache is not None:
            cached = await self.cache.lookup_vector(embedding_key(self.kind, text))
            if cached is not None:
                vector = self._remember(text, cached)
        return vector

    def _remember(self, text: str, vector: list[float]) -> npt.NDArray[np.float64]:
        if len(self._memo) >= MEMO:
            self._memo.pop(next(iter(self._memo)))
        row: npt.NDArray[np.float64] = unit_rows([vector])[0]
        row.flags.writeable = False  # handed out again: nobody may change it
        self._memo[text] = row
        return row

    async def _ask(self, texts: list[str]) -> dict[str, npt.NDArray[np.float64]]:
        loop = asyncio.get_running_loop()
        futures = {t: loop.create_future() for t in texts}
        self._asked.update(futures)
        got: dict[str, npt.NDArray[np.float64]] = {}
        try:
            for start in range(0, len(texts), BATCH):
                got |= await self._request(texts[start : start + BATCH])
        finally:
            for text, future in futures.items():
                del self._asked[text]
                future.set_result(got.get(text))
        return got

    async def _request(self, batch: list[str]) -> dict[str, npt.NDArray[np.float64]]:
        def call() -> Awaitable[EmbeddingReply]:
            return self.limited.run(lambda: self.backend.embed(batch))

        reply, retries = await self.retrying.run(call)
        self._meter(reply, retries)
        out = {}
        for text, vector in zip(batch, reply.vectors, strict=True):
            if self.cache is not None:
                self.cache.put_vector(embedding_key(self.kind, text), self.kind, vector)
            out[text] = self._remember(text, vector)
        return out

    def _meter(self, reply: EmbeddingReply, retries: int) -> None:
        u = self.usage
        u.calls += 1
        u.retries += retries
        if reply.input_tokens is None:
            u.tokens_unknown += 1
            u.cost_usd = None
            u.tokens_unknown_reason = u.tokens_unknown_reason or "the reply gave no prompt_tokens"
            return
        u.input_tokens += reply.input_tokens
        cost = self.prices.cost(reply.input_tokens, 0)
        u.cost_usd = None if cost is None or u.cost_usd is None else u.cost_usd + cost
