"""The `view` server's index in headless Chromium: the filter hides the runs it does not
match, and the ticked runs in sight open their comparison."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from disputelab.report.serve import ReportServer
from tests.report.pages import serving, three_runs

pytest.importorskip("selenium", reason="selenium is not installed (pip install '.[browser]')")

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

pytestmark = pytest.mark.slow  # drives headless Chromium


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ReportServer, tuple[str, ...]]]:
    root: Path = tmp_path_factory.mktemp("view-browser")
    runs = three_runs(root)
    with serving(root) as srv:
        yield srv, runs


def _ready(driver: Any) -> None:
    WebDriverWait(driver, 60).until(
        lambda d: d.execute_script("return document.documentElement.dataset.ready === '1'")
    )


def _row(driver: Any, run_id: str) -> Any:
    return driver.find_element(By.CSS_SELECTOR, f'tr[data-run="{run_id}"]')


def test_the_filter_hides_rows_and_the_ticked_runs_in_sight_are_compared(
    browser: Any, served: tuple[ReportServer, tuple[str, ...]]
) -> None:
    srv, (short, long, experiment) = served
    browser.get_log("browser")
    browser.get(srv.url)
    _ready(browser)
    compare = browser.find_element(By.ID, "compare-ticked")
    _row(browser, experiment).find_element(By.CSS_SELECTOR, "input.tick").click()
    assert not compare.is_enabled()  # by run, one run ranks nothing

    browser.find_element(By.ID, "filter-text").send_keys("tenancy")
    WebDriverWait(browser, 30).until(lambda d: not _row(d, experiment).is_displayed())
    assert _row(browser, short).is_displayed() and _row(browser, long).is_displayed()
    for run_id in (short, long):
        _row(browser, run_id).find_element(By.CSS_SELECTOR, "input.tick").click()
    # The experiment stays ticked, out of sight, and is not compared.
    assert browser.find_element(By.ID, "filter-count").text == "2 of 3 shown, 2 ticked"
    compare.click()

    WebDriverWait(browser, 120).until(lambda d: "/compare?" in d.current_url)
    _ready(browser)
    assert browser.find_element(By.TAG_NAME, "h1").text == "disputelab comparison · by run"
    compared = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "ul.compared a")]
    assert sorted(compared) == sorted([short, long])
    board = browser.find_element(By.CSS_SELECTOR, "#leaderboard table.data")
    arms = [
        r.find_elements(By.TAG_NAME, "td")[1].text
        for r in board.find_elements(By.CSS_SELECTOR, "tbody tr")
    ]
    assert sorted(arms) == sorted([short, long])
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
