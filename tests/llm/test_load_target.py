"""The bench's load target: a provider's latency, faults and limits, and the counts it
reports, including how much of each prompt repeats an earlier prompt's start."""

from __future__ import annotations

import http.client
import json
import os
import random
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.experiments.bench import load_target, target_stats
from disputelab.llm.load_target import (
    PrefixReuse,
    TargetSettings,
    _fault,
    common_prefix_length,
    draw_latency,
)

TEXT = st.text(alphabet="ab\n:", max_size=12)


@given(TEXT, TEXT)
def test_the_common_prefix_is_what_a_character_walk_finds(a: str, b: str) -> None:
    assert common_prefix_length(a, b) == len(os.path.commonprefix([a, b]))  # noqa: RUF071


def test_prefix_reuse_counts_the_longest_start_shared_with_any_earlier_prompt() -> None:
    reuse = PrefixReuse()
    assert reuse.add("system: rent\nuser: hello") == 0
    assert reuse.add("system: rent\nuser: bye") == len("system: rent\nuser: ")
    assert reuse.add("system: wages") == len("system: ")
    assert reuse.add("system: rent\nuser: hello") == len("system: rent\nuser: hello")
    total = sum(len(p) for p in ("system: rent\nuser: hello", "system: rent\nuser: bye"))
    total += len("system: wages") + len("system: rent\nuser: hello")
    assert reuse.total == total
    assert reuse.share == pytest.approx((19 + 8 + 24) / total)


@given(st.lists(TEXT, max_size=15))
def test_prefix_reuse_matches_a_brute_force_search(prompts: list[str]) -> None:
    reuse = PrefixReuse()
    for i, p in enumerate(prompts):
        expected = max((common_prefix_length(p, q) for q in prompts[:i]), default=0)
        assert reuse.add(p) == expected


def test_fault_rates_split_the_unit_interval_in_order() -> None:
    s = TargetSettings(rate_429=0.1, rate_500=0.2, rate_timeout=0.3, rate_malformed=0.1)
    assert [_fault(s, r) for r in (0.05, 0.15, 0.35, 0.65, 0.75)] == [
        "429",
        "500",
        "timeout",
        "malformed",
        "",
    ]


@pytest.mark.parametrize(
    "bad",
    [
        {"rate_429": 1.5},
        {"rate_500": 0.6, "rate_timeout": 0.6},
        {"latency_s": -1},
        {"hidden_limit": 0},
    ],
)
def test_impossible_settings_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        TargetSettings(**bad)


def test_latency_shapes_keep_their_mean() -> None:
    rng = random.Random(1)
    for shape in ("uniform", "exponential"):
        s = TargetSettings(latency_s=0.2, latency_shape=shape)  # type: ignore[arg-type]
        draws = [draw_latency(s, rng) for _ in range(4000)]
        assert sum(draws) / len(draws) == pytest.approx(0.2, rel=0.1)
    assert draw_latency(TargetSettings(latency_s=0.2), rng) == 0.2


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, dict(reply.headers), reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


SCHEMA = {
    "type": "object",
    "properties": {"utterance": {"type": "string"}, "rating": {"type": "integer", "maximum": 5}},
}
BODY = {
    "model": "m",
    "messages": [{"role": "user", "content": "hello"}],
    "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": SCHEMA}},
}


def test_the_target_answers_with_an_instance_of_the_requested_schema() -> None:
    with load_target(TargetSettings(latency_s=0)) as url:
        status, _, payload = _post(url, BODY)
        stats = target_stats(url)
    content = json.loads(json.loads(payload)["choices"][0]["message"]["content"])
    assert status == 200
    assert isinstance(content["utterance"], str) and content["rating"] == 5
    assert stats["requests"] == 1 and stats["answered"] == 1 and stats["distinct"] == 1
    assert stats["sample_request"] == BODY


def test_the_target_answers_embeddings_with_one_vector_per_input() -> None:
    body = {"model": "e", "input": ["rent arrears", "repairs first"]}
    with load_target(TargetSettings(latency_s=0)) as url:
        request = urllib.request.Request(
            url + "/embeddings",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as reply:
            data = json.loads(reply.read())["data"]
        stats = target_stats(url)
    assert [d["index"] for d in data] == [0, 1]
    assert data[0]["embedding"] != data[1]["embedding"]
    assert stats["requests"] == 1


def test_the_target_counts_a_repeated_request_once_among_the_distinct() -> None:
    other = {**BODY, "messages": [{"role": "user", "content": "hello again"}]}
    with load_target(TargetSettings(latency_s=0)) as url:
        for body in (BODY, BODY, other):
            _post(url, body)
        stats = target_stats(url)
    assert (stats["requests"], stats["distinct"]) == (3, 2)


def test_the_target_injects_429s_with_retry_after_and_counts_them() -> None:
    with load_target(TargetSettings(latency_s=0, rate_429=1.0, retry_after_s=0.3)) as url:
        status, headers, _ = _post(url, BODY)
        stats = target_stats(url)
    assert status == 429
    assert headers.get("retry-after") == "0.3"
    assert stats["faults"]["429"] == 1 and stats["answered"] == 0


def test_the_target_sends_malformed_bodies_and_500s() -> None:
    with load_target(TargetSettings(latency_s=0, rate_malformed=1.0)) as url:
        status, _, payload = _post(url, BODY)
    assert status == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(payload)
    with load_target(TargetSettings(latency_s=0, rate_500=1.0)) as url:
        assert _post(url, BODY)[0] == 500


def test_the_target_counts_the_connections_it_accepts() -> None:
    # urllib opens a connection per request and closes it: three requests, three.
    with load_target(TargetSettings(latency_s=0)) as url:
        for _ in range(3):
            _post(url, BODY)
        stats = target_stats(url)
    assert stats["requests"] == 3
    assert stats["connections"] == 4  # and one more for the /stats request itself
    assert stats["max_open_connections"] >= 1


def test_calls_over_one_keep_alive_connection_count_it_once() -> None:
    with load_target(TargetSettings(latency_s=0)) as url:
        parts = urlsplit(url)
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
        for _ in range(5):
            conn.request("POST", parts.path + "/chat/completions", json.dumps(BODY))
            assert conn.getresponse().read()
        conn.close()
        stats = target_stats(url)
    assert (stats["requests"], stats["connections"]) == (5, 2)  # the call's and /stats'
