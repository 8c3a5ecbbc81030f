"""`disputelab.api.stores`: a store's runs, its health, its recovery, and its report
server."""

from __future__ import annotations

from pathlib import Path

import pytest

from disputelab import api
from disputelab.api import stores


def _store_with_a_run(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    api.run("tenancy", store=root, budget=12)
    return root


def test_a_path_where_nothing_was_run_is_missing_a_store(tmp_path: Path) -> None:
    assert stores.store_missing(tmp_path / "nowhere")
    assert stores.store_missing(tmp_path)  # a folder without a store's database
    (tmp_path / "afile").write_text("mine")
    assert not stores.store_missing(tmp_path / "afile")  # the store's to refuse, itself
    assert not stores.store_missing(_store_with_a_run(tmp_path))


def test_list_runs_says_how_far_each_run_got(tmp_path: Path) -> None:
    root = _store_with_a_run(tmp_path)
    (run,) = stores.list_runs(root)
    assert run.kind == "run" and run.label.startswith("tenancy/")
    assert run.complete == run.planned == 1 and run.failed == 0
    assert run.created.year >= 2024


def test_a_healthy_store_checks_healthy_and_recovers_whole(tmp_path: Path) -> None:
    root = _store_with_a_run(tmp_path)
    found = stores.check_store(root)
    assert found.healthy and found.salvage is not None
    copied = stores.recover_store(tmp_path / "copy", store=root)
    assert copied.whole and [r.episodes for r in copied.runs] == [1]  # no mediator, no twin
    assert [r.run_id for r in stores.list_runs(tmp_path / "copy")] == [
        r.run_id for r in stores.list_runs(root)
    ]


def test_checking_or_recovering_where_there_is_no_store_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(api.StoreError):
        stores.check_store(tmp_path)
    root = _store_with_a_run(tmp_path)
    with pytest.raises(api.StoreError, match="already holds a store"):
        stores.recover_store(root, store=root)


def test_overwrites_data_names_the_files_a_report_must_not_replace(tmp_path: Path) -> None:
    root = _store_with_a_run(tmp_path)
    assert stores.overwrites_data(root / "disputelab.sqlite", root) == "store"
    assert stores.overwrites_data(tmp_path / "copy.sqlite", root) is None
    (tmp_path / "copy.sqlite").write_bytes((root / "disputelab.sqlite").read_bytes())
    assert stores.overwrites_data(tmp_path / "copy.sqlite", root) == "database"
    assert stores.overwrites_data(tmp_path / "report.md", root) is None


def test_report_server_serves_the_store_on_a_free_port(tmp_path: Path) -> None:
    root = _store_with_a_run(tmp_path)
    server = stores.report_server(root, "127.0.0.1", 0)
    try:
        assert server.url.startswith("http://127.0.0.1:") and not server.url.endswith(":0/")
    finally:
        server.server_close()
    assert stores.is_loopback("localhost") and not stores.is_loopback("0.0.0.0")


@pytest.mark.parametrize("since", ["0001-01-01T00:00+23:59", "9999-12-31T23:59:59-23:59"])
def test_a_since_past_the_ends_of_the_local_calendar_is_a_filter_error(since: str) -> None:
    with pytest.raises(stores.RunFilterError, match=r"since: .* lies outside the dates"):
        stores.parse_since(since)
