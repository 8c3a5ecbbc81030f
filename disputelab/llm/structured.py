"""Structured output: ask for JSON that fits a schema, repair small faults, re-ask on errors."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from disputelab.llm.base import (
    ChatModel,
    ChatRequest,
    ChatResponse,
    Deadline,
    Message,
    ModelReplyError,
    TransientModelError,
    TruncatedReplyError,
)
from disputelab.memo import ByIdentity

T = TypeVar("T")

# The longest `maxLength` a schema may give a string. llama.cpp turns a bounded string into
# nested optional rules, one level per character; measured with llama-cpp-python 0.3 here,
# 1,000 still compiles and 1,100 fails to parse (its HTTP server crashes on it). 800 keeps
# a margin for other builds. Longer text needs no maxLength: max_tokens bounds it.
MAX_SCHEMA_STRING = 800


_CHECKED: ByIdentity[bool] = ByIdentity()  # schemas already found within bounds
# The same, by the schema's JSON: agents that build an equal schema afresh for every call
# (a dict literal, a pydantic model's schema) are checked once, not on every call.
_CHECKED_TEXTS: set[str] = set()
_CHECKED_LIMIT = 1024


def _check_once(schema: dict[str, Any], where: str, encoded: str) -> None:
    """`check_schema_bounds`, skipped for a schema already checked: the same object (agents
    reuse one schema for every call), or an equal one (`encoded`: its prompt line, which
    holds its JSON). Walking it each time cost a third of a millisecond."""
    if _CHECKED.get(schema):
        return
    if encoded not in _CHECKED_TEXTS:
        check_schema_bounds(schema, where)
        if len(_CHECKED_TEXTS) >= _CHECKED_LIMIT:
            _CHECKED_TEXTS.clear()
        _CHECKED_TEXTS.add(encoded)
    _CHECKED.put(schema, True)


@functools.cache
def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A reply class's JSON schema, built once and shared: pydantic builds it anew on every
    call (about half a millisecond), and the checks and prompt line above are memoised by
    the schema object. Read it, never change it (copy it to make a variant)."""
    return model.model_json_schema()


def check_schema_bounds(schema: Any, where: str = "schema") -> None:
    """Refuse a schema with a string bound some servers cannot compile (a bug of ours,
    caught on the first call rather than as a crashed server)."""
    if isinstance(schema, dict):
        bound = schema.get("maxLength")
        if isinstance(bound, int) and bound > MAX_SCHEMA_STRING:
            raise ValueError(
                f"{where}: maxLength {bound} is over {MAX_SCHEMA_STRING}, which llama.cpp "
                "grammars cannot compile; lower it or drop it and rely on max_tokens"
            )
        for key, value in schema.items():
            check_schema_bounds(value, f"{where}.{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            check_schema_bounds(value, f"{where}[{i}]")


# json-repair is pure Python and its time grows faster than the text: here about 4 ms for
# 2 KB, 0.27 s for 64 KB and 20-60 s for 1 MB. A broken reply longer than this is not
# repaired at all. Repair runs in a thread, and a thread cannot be stopped once started:
# the size is what bounds the work one reply can cause after its call's deadline. Valid
# JSON of any length (within the body's cap) is read without repair.
MAX_REPAIR_CHARS = 64 * 1024
# Up to this, repair takes a few milliseconds and runs where it is asked; past it, in a
# thread, within what is left of the call's deadline, while the event loop goes on
# serving the other calls in flight.
INLINE_REPAIR_CHARS = 2 * 1024
_TOO_DEEP = "the reply's JSON nests too deeply to read"


def load_json(text: str) -> Any:
    """Parse JSON, tolerating code fences, prose around the object, and common faults
    (single quotes, trailing commas, unquoted keys) through json-repair."""
    valid, found = _strict(text)
    return found if valid else _repaired(found)


def _strict(text: str) -> tuple[bool, Any]:
    """(True, the value) when `text` is JSON as it stands; else (False, the part of it
    to repair: from its first brace on)."""
    stripped = text.strip()
    try:
        return True, json.loads(stripped)
    except json.JSONDecodeError:
        pass
    except RecursionError:  # the C parser's limit, which repair would hit again
        raise ValueError(_TOO_DEEP) from None
    start = stripped.find("{")
    return False, stripped[start:] if start >= 0 else stripped


def repair_json(text: str, **options: Any) -> Any:
    """json-repair's `repair_json`, imported on first use: a valid reply, nearly every
    one, needs no repair, and importing json-repair took tens of milliseconds of every
    command's start-up."""
    from json_repair import repair_json as repair

    return repair(text, **options)


def _repaired(candidate: str) -> Any:
    """`candidate` repaired into an object, or ValueError saying why it cannot be."""
    if len(candidate) > MAX_REPAIR_CHARS:
        raise ValueError(
            f"the reply is {len(candidate):,} characters of broken JSON, too long to repair "
            f"(repair is tried on at most {MAX_REPAIR_CHARS:,} characters)"
        )
    try:
        repaired = repair_json(candidate, return_objects=True)
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None
    if not isinstance(repaired, dict) or not repaired:
        raise ValueError("the reply is not a JSON object")
    return repaired


async def load_reply_json(text: str, deadline: Deadline | None, name: str) -> Any:
    """`load_json` for the reply of a call to the endpoint `name`: a long repair runs in
    a thread, within what is left of the call's `deadline`, and a TransientModelError
    naming both ends the call when that passes first. Valid and short replies are read
    here, without the thread's cost."""
    valid, found = _strict(text)
    if valid:
        return found
    if not INLINE_REPAIR_CHARS < len(found) <= MAX_REPAIR_CHARS:
        return _repaired(found)  # quick: repaired, or refused on its length
    repair = asyncio.to_thread(_repaired, found)
    if deadline is None:  # from the cache, or an endpoint whose calls have no deadline
        return await repair
    try:
        return await asyncio.wait_for(repair, deadline.remaining())
    except TimeoutError:
        raise TransientModelError(
            f"{name}: the reply ({len(found):,} characters of broken JSON) was still being "
            f"repaired when the call's {deadline.seconds:g} s deadline passed"
        ) from None


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = []
        for e in exc.errors(include_url=False)[:5]:
            loc = ".".join(str(p) for p in e["loc"]) or "(top level)"
            parts.append(f"{loc}: {e['msg']}")
        return "; ".join(parts)
    return str(exc)


_INSTRUCTIONS: ByIdentity[str] = ByIdentity()


def schema_instruction(schema: dict[str, Any]) -> str:
    """The prompt's line asking for the schema, written once per schema object (agents
    reuse one schema for every call, and encoding it was a tenth of a call's CPU)."""
    known = _INSTRUCTIONS.get(schema)
    if known is not None:
        return known
    text = (
        "Reply with one JSON object only, no other text. It must match this JSON schema:\n"
        + json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    )
    return _INSTRUCTIONS.put(schema, text)


# How much more room a reply cut off at its token limit gets when it is asked again.
ROOM_FACTOR = 2


def _with_schema_line(request: ChatRequest) -> tuple[Message, ...]:
    """The request's messages, the last one followed by the schema it must match."""
    messages = request.messages
    if request.schema is None:
        return messages
    instruction = schema_instruction(request.schema)
    _check_once(request.schema, request.schema_name, instruction)
    *head, last = messages
    return (*head, Message(last.role, last.content + "\n\n" + instruction))


def _cut_off(response: ChatResponse) -> bool:
    return response.extra.get("finish_reason") == "length"


async def _complete_with_room(
    model: ChatModel, request: ChatRequest, responses: list[ChatResponse]
) -> ChatResponse:
    """One call; a reply cut off at its token limit is asked again once with more room,
    and cut off again it is a TruncatedReplyError. A cut reply is never parsed: JSON
    repair would close it into an answer the model never gave."""
    response = await model.complete(request)
    responses.append(response)
    if not _cut_off(response):
        return response
    roomier = ChatRequest(
        request.messages,
        request.temperature,
        request.max_tokens * ROOM_FACTOR,
        request.schema,
        request.schema_name,
        request.sample,
        request.seed,
    )
    response = await model.complete(roomier)
    responses.append(response)
    if _cut_off(response):
        raise TruncatedReplyError(
            f"{model.name}: truncated: the reply was cut off at max_tokens="
            f"{request.max_tokens} and again at {roomier.max_tokens}; it was not repaired",
            responses,
        )
    return response


async def ask_structured(
    model: ChatModel,
    request: ChatRequest,
    parse: Callable[[Any], T],
    reasks: int = 2,
) -> tuple[T, list[ChatResponse]]:
    """Call until the reply parses and validates, at most 1 + `reasks` times.

    Each re-ask shows the model its own reply and what was wrong with it. A reply cut
    off at its token limit is asked again with more room, not repaired (see
    `_complete_with_room`). Raises ModelReplyError naming the last problem when every
    attempt fails, TruncatedReplyError when the reply never fits its room, and
    TransientModelError when a reply is still being repaired as its call's deadline
    passes (`load_reply_json`).
    """
    messages = _with_schema_line(request)
    responses: list[ChatResponse] = []
    problem = "no reply"
    for _ in range(reasks + 1):
        response = await _complete_with_room(model, request.with_messages(messages), responses)
        try:
            found = await load_reply_json(response.text, response.deadline, model.name)
            return parse(found), responses
        except (ValueError, ValidationError) as exc:
            problem = _describe(exc)
        messages = (
            *messages,
            # Echo a long failed reply only in part: a rambling reply fed back in full
            # mostly teaches a small model to ramble again.
            Message("assistant", response.text[:600]),
            Message(
                "user",
                f"That reply could not be used ({problem}). Answer again with "
                "one JSON object that matches the schema exactly.",
            ),
        )
    raise ModelReplyError(
        f"{model.name}: reply still did not fit the expected structure after "
        f"{reasks + 1} attempts: {problem}",
        responses,
    )
