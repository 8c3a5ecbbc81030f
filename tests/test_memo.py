"""`ByIdentity` remembers a value for one object, never for another that merely equals it,
and stays bounded."""

from __future__ import annotations

import pytest

from disputelab.memo import ByIdentity


def test_a_value_is_remembered_for_the_same_object_only() -> None:
    memo: ByIdentity[str] = ByIdentity()
    schema = {"type": "object"}
    assert memo.get(schema) is None
    assert memo.put(schema, "encoded") == "encoded"
    assert memo.get(schema) == "encoded"
    assert memo.get({"type": "object"}) is None  # equal, but another object


def test_extras_keep_separate_values_for_one_object() -> None:
    memo: ByIdentity[str] = ByIdentity()
    schema = {"type": "object"}
    memo.put(schema, "sorted", (True, False))
    memo.put(schema, "plain", (False, False))
    assert memo.get(schema, (True, False)) == "sorted"
    assert memo.get(schema, (False, False)) == "plain"
    assert memo.get(schema) is None


def test_an_object_the_caller_dropped_cannot_lend_its_id_to_a_new_one() -> None:
    memo: ByIdentity[int] = ByIdentity()
    for n in range(200):
        memo.put({"n": n}, n)  # the caller keeps no reference; the memo does
        fresh = {"n": -1}  # CPython would hand it a just-freed dict's id
        assert memo.get(fresh) is None


def test_the_memo_starts_over_when_full() -> None:
    memo: ByIdentity[int] = ByIdentity(limit=3)
    kept = [object() for _ in range(4)]
    for i, obj in enumerate(kept):
        memo.put(obj, i)
    assert len(memo) == 1 and memo.get(kept[3]) == 3 and memo.get(kept[0]) is None


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ByIdentity(limit=0)


def test_the_values_are_those_of_the_objects_still_remembered() -> None:
    memo: ByIdentity[int] = ByIdentity(limit=2)
    kept = [object() for _ in range(3)]
    memo.put(kept[0], 0)
    memo.put(kept[1], 1, "extra")
    assert sorted(memo.values()) == [0, 1]
    memo.put(kept[2], 2)  # full: it starts over
    assert memo.values() == [2]
