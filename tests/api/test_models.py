"""The front door's model checks: `check_models` before anything is played, and
`open_models` over the store's response cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from disputelab import api


def test_rule_agents_need_no_model_and_no_cache(tmp_path: Path) -> None:
    checked = api.check_models(["rule"])
    assert checked.warnings == []
    hub = api.open_models(["rule"], store=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()  # no cache opened for rule agents
    assert hub.ledger.roles == {}


def test_check_models_refuses_a_model_that_cannot_be_used() -> None:
    with pytest.raises(api.ModelConfigError):
        api.check_models(["nope:x"])


def test_a_plan_is_warned_of_a_missing_key_as_a_run_is_refused_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(api.ModelConfigError):
        api.check_models(["openai:gpt-x"])
    heard: list[tuple[str, str]] = []
    checked = api.check_models(["openai:gpt-x"], keys=False, on_warning=lambda *w: heard.append(w))
    assert checked.warnings == heard and len(heard) == 1
    model, why = heard[0]
    assert model == "openai:gpt-x" and why.endswith("; the run will need it")


def test_open_models_opens_the_cache_beside_the_store(tmp_path: Path) -> None:
    store = api.open_store(tmp_path / "runs")
    try:
        hub = api.open_models(["openai:m@http://127.0.0.1:9/v1"], store=store)
        assert hub.open_cache() is not None
        assert list(Path(store.root).glob("*cache*"))
        assert api.run_loop(lambda: hub.aclose()) is None
    finally:
        store.close()
