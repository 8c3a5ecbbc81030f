"""Make a valid instance of a JSON schema: the fake server's stand-in for a model."""

from __future__ import annotations

from typing import Any


def fill(schema: dict[str, Any], defs: dict[str, Any] | None = None, text: str = "ok") -> Any:
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return fill(defs[schema["$ref"].split("/")[-1]], defs, text)
    if "anyOf" in schema:
        return fill(schema["anyOf"][0], defs, text)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: fill(v, defs, text) for k, v in props.items()}
    if kind == "array":
        return [fill(schema.get("items", {}), defs, text)] * max(1, schema.get("minItems", 1))
    if kind == "boolean":
        return True
    if kind in ("number", "integer"):
        return schema.get("maximum", 4)
    return text
