"""The embedded model's settings that need no model: threads per call and the cache size."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.llm.local import (
    CACHE_ENV,
    DEFAULT_CACHE_MB,
    THREADS_ENV,
    LocalLlama,
    cache_size_mb,
    fixed_threads,
    threads_for_load,
)
from disputelab.llm.model_errors import ModelConfigError
from disputelab.machine import usable_cpus


@given(st.integers(1, 64), st.floats(0.0, 200.0), st.integers(0, 64))
def test_a_call_gets_between_one_thread_and_every_core(cpus: int, load: float, last: int) -> None:
    LocalLlama.last_threads = last
    assert 1 <= threads_for_load(cpus, load) <= cpus


@given(st.integers(1, 64), st.floats(0.0, 100.0), st.floats(0.0, 100.0))
def test_a_busier_machine_never_gets_more_threads(cpus: int, a: float, b: float) -> None:
    LocalLlama.last_threads = 0
    low, high = sorted((a, b))
    assert threads_for_load(cpus, high) <= threads_for_load(cpus, low)


def test_the_models_own_last_threads_are_not_counted_as_competition() -> None:
    LocalLlama.last_threads = 2
    assert threads_for_load(2, 2.0) == 2  # its own two threads, nothing else running
    assert threads_for_load(2, 3.0) == 1  # one other busy thread: one core left
    assert threads_for_load(2, 9.0) == 1
    assert threads_for_load(8, None) == 8  # no load average: every core


def test_the_cache_size_and_thread_count_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert cache_size_mb() == DEFAULT_CACHE_MB and fixed_threads() is None
    monkeypatch.setenv(CACHE_ENV, "0")
    monkeypatch.setenv(THREADS_ENV, "all")
    assert cache_size_mb() == 0 and fixed_threads() == usable_cpus()
    monkeypatch.setenv(THREADS_ENV, "3")
    assert fixed_threads() == 3 and LocalLlama().threads == 3


@pytest.mark.parametrize(
    ("env", "value"),
    [(CACHE_ENV, "-1"), (CACHE_ENV, "lots"), (THREADS_ENV, "0"), (THREADS_ENV, "x")],
)
def test_a_bad_setting_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch, env: str, value: str
) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ModelConfigError, match=env):
        LocalLlama()
