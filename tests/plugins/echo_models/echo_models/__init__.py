"""A model backend that answers offline: every reply fills the schema it is asked for.

`chat_model` returns a bare `ChatModel` (disputelab wraps it: unpriced, the run's limits);
`endpoint` returns a whole `Endpoint`, priced, with a limit of its own.
"""

from __future__ import annotations

import json
from typing import Any

from disputelab.plugin import ChatModel, ChatRequest, ChatResponse, Endpoint, ModelRequest, Prices


def _fill(schema: dict[str, Any], defs: dict[str, Any], text: str) -> Any:
    """A value of `schema`: the first choice, the largest number, `text` for a string."""
    if "$ref" in schema:
        return _fill(defs[schema["$ref"].split("/")[-1]], defs, text)
    if "anyOf" in schema:
        return _fill(schema["anyOf"][0], defs, text)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {k: _fill(v, defs, text) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [_fill(schema.get("items", {}), defs, text)] * max(1, schema.get("minItems", 1))
    if kind == "boolean":
        return True
    if kind in ("number", "integer"):
        return schema.get("maximum", 4)
    return text


class Echo:
    """Answers every request with the schema filled in, naming its model."""

    def __init__(self, name: str, model: str) -> None:
        self.name = name
        self.model = model

    async def complete(self, request: ChatRequest) -> ChatResponse:
        schema = request.schema or {"type": "object"}
        reply = _fill(schema, schema.get("$defs", {}), f"echo from {self.model}")
        return ChatResponse(json.dumps(reply), self.model, input_tokens=5, output_tokens=3)


def chat_model(request: ModelRequest) -> ChatModel:
    return Echo(request.shown, request.model)


def endpoint(request: ModelRequest) -> Endpoint:
    return Endpoint(Echo(request.shown, request.model), Prices(1.0, 2.0), 2, None)
