"""Embeddings from an endpoint's `/embeddings`, over real HTTP: unit vectors in the order
asked, batched, filed in the response cache by model and text, and a server without the
route refused in one line that says how to use the in-process model instead."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from disputelab.llm.base import ChatRequest, Message
from disputelab.llm.cache import embedding_key, request_key
from disputelab.llm.embedding_endpoint import BATCH
from disputelab.llm.embedding_reply import EmbeddingsUnsupported
from disputelab.llm.models import ModelConfigError, ModelHub
from disputelab.llm.testing import fake_embedding, fake_openai


def _embed(hub: ModelHub, spec: str, texts: list[str]) -> np.ndarray:
    async def go() -> np.ndarray:
        try:
            return await hub.embedder(spec).embed(texts)
        finally:
            await hub.aclose()

    return asyncio.run(go())


def test_vectors_come_back_unit_length_one_row_per_text_in_order(tmp_path: Path) -> None:
    texts = ["rent goes up", "the boiler is broken", "rent goes up"]
    with fake_openai() as server:
        vectors = _embed(ModelHub(None), f"openai:emb@{server.url}", texts)
    assert vectors.shape == (3, len(fake_embedding("x")))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)  # the server's are not
    expected = np.asarray(fake_embedding(texts[1]))
    assert np.allclose(vectors[1], expected / np.linalg.norm(expected))
    assert np.array_equal(vectors[0], vectors[2])
    (body,) = server.embedding_requests  # a repeated text is asked for once
    assert body["input"] == texts[:2] and body["model"] == "emb"
    assert body["encoding_format"] == "float"
    assert server.requests == []  # no chat call was made


def test_many_texts_go_in_batches(tmp_path: Path) -> None:
    texts = [f"memory number {i}" for i in range(BATCH + 5)]
    with fake_openai() as server:
        vectors = _embed(ModelHub(None), f"openai:emb@{server.url}", texts)
    assert len(vectors) == BATCH + 5
    assert [len(b["input"]) for b in server.embedding_requests] == [BATCH, 5]


def test_a_rerun_reads_every_vector_from_the_response_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    with fake_openai() as server:
        spec = f"openai:emb@{server.url}"
        first = _embed(ModelHub(cache), spec, ["a", "b"])
        again = _embed(ModelHub(cache), spec, ["b", "a", "c"])
    assert [b["input"] for b in server.embedding_requests] == [["a", "b"], ["c"]]
    assert np.array_equal(again[0], first[1]) and np.array_equal(again[1], first[0])


def test_an_embedding_is_filed_apart_from_any_chat_reply() -> None:
    chat = request_key("m", ChatRequest((Message("user", "a"),)))
    assert embedding_key("m", "a") != chat
    assert embedding_key("m", "a") != embedding_key("other", "a")


def test_a_server_without_the_route_is_refused_in_one_line_naming_the_way_out() -> None:
    with fake_openai(embeddings=False) as server, pytest.raises(EmbeddingsUnsupported) as exc:
        _embed(ModelHub(None), f"openai:emb@{server.url}", ["a"])
    message = str(exc.value)
    assert "\n" not in message
    assert "serves no embeddings (404" in message
    assert "--embeddings-model local" in message
    assert len(server.embedding_requests) == 1  # not retried: retrying cannot help


def test_the_embedded_chat_model_is_no_embeddings_endpoint() -> None:
    with pytest.raises(ModelConfigError, match="serves no embeddings"):
        ModelHub(None).embedder("local")


def test_a_text_in_flight_is_waited_for_rather_than_asked_again() -> None:
    """The same event reaches every party at once: it is embedded once."""
    with fake_openai() as server:
        hub = ModelHub(None)
        spec = f"openai:emb@{server.url}"

        async def go() -> list[np.ndarray]:
            embedder = hub.embedder(spec)
            try:
                return list(
                    await asyncio.gather(
                        embedder.embed(["the event", "memory of a"]),
                        embedder.embed(["the event", "memory of b"]),
                    )
                )
            finally:
                await hub.aclose()

        a, b = asyncio.run(go())
    asked = [text for body in server.embedding_requests for text in body["input"]]
    assert sorted(asked) == ["memory of a", "memory of b", "the event"]
    assert np.array_equal(a[0], b[0])
    assert hub.ledger.roles["embeddings"].calls == len(server.embedding_requests)
