"""Spliced JSON equals plain JSON, whatever the payload holds."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from disputelab.llm.encoding import _SLOT, dumps_spliced, encoded_once

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
# Text that may hold the slot string itself, in whole or in part.
texts = st.text() | st.sampled_from([_SLOT, f"a{_SLOT}b", _SLOT[:5], json.dumps(_SLOT)])


@given(
    messages=st.lists(st.tuples(st.sampled_from(["system", "user"]), texts), max_size=3),
    schema=values,
    name=texts,
    sort_keys=st.booleans(),
    ensure_ascii=st.booleans(),
)
def test_a_spliced_request_is_byte_for_byte_the_plain_encoding(
    messages: list[tuple[str, str]], schema: Any, name: str, sort_keys: bool, ensure_ascii: bool
) -> None:
    payload = {"messages": messages, "schema": schema, "schema_name": name, "seed": 3}
    plain = json.dumps(payload, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
    assert dumps_spliced(payload, "schema", sort_keys, ensure_ascii) == plain
    assert dumps_spliced(payload, "schema", sort_keys, ensure_ascii) == plain  # remembered


def test_a_schema_is_encoded_once_per_object() -> None:
    schema = {"type": "object", "properties": {"b": {}, "a": {}}}
    first = encoded_once(schema, sort_keys=True)
    assert encoded_once(schema, sort_keys=True) is first
    assert encoded_once(dict(schema), sort_keys=True) == first  # an equal copy: same text
    assert encoded_once(schema) != first  # key order is part of the encoding
