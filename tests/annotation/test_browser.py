"""Two annotators in two windows of a real headless Chromium: `disputelab annotate`
serves a stored run, each window opens its own link, agrees to the consent and labels
every turn through the page's own selects, radios and buttons, taking turns; the server
stops once both are done, and `validate-judge --against human:RUN` scores the oracle at
alpha 1 against the annotator who labelled its levels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("selenium", reason="selenium is not installed (pip install '.[browser]')")
pytest.importorskip("uvicorn", reason="the host extra is not installed")
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.store.sqlite import Store
from tests.annotation.test_end_to_end import REPO, _form, _links, rule_run
from tests.live_browser import click_and_wait, close_extra_windows, free_port

runner = CliRunner()


def _send(driver: Any, form: dict[str, str], button: str) -> None:
    """Fill the page's form as a person would, click `button` and wait for the next page."""
    for name, value in form.items():
        if name.startswith("stance:"):
            Select(driver.find_element(By.NAME, name)).select_by_value(value)
        elif name.startswith("consensus:"):
            driver.find_element(By.CSS_SELECTOR, f'input[name="{name}"][value="{value}"]').click()
    click_and_wait(driver, button)


def _rate(driver: Any) -> None:
    for radio in driver.find_elements(By.CSS_SELECTOR, 'input[type="radio"][value="4"]'):
        radio.click()
    _send(driver, {}, "answer")


def test_two_annotators_in_two_windows(browser: Any, tmp_path: Path) -> None:
    store = tmp_path / "runs"
    run_id = rule_run(store)
    db = Store(store, writable=False)
    records = [db.load_episode(e) for e in db.episode_ids(run_id)]
    db.close()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "disputelab", "--store", str(store), "annotate", "last",
               "--annotators", "2", "--port", str(free_port())]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) as server:
        try:
            links = _links(server, 2)
            windows = _open_windows(browser, [links["annotator-1"][1], links["annotator-2"][1]])
            _label_in_turns(browser, windows, records)
            rest = server.communicate(timeout=300)[0]
        finally:
            if server.poll() is None:
                server.kill()
            close_extra_windows(browser)
    assert server.returncode == 0 and "2 of 2 annotators done" in rest, rest
    result = runner.invoke(
        app, ["--store", str(store), "validate-judge", "--against", "human:last", "--format",
              "json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = {r["tracker"]: r for r in json.loads(result.output)["rows"]}
    first, second = (f"alpha vs {links[k][0]}" for k in ("annotator-1", "annotator-2"))
    assert float(rows["oracle"][first]) == 1.0 and float(rows["oracle"][second]) < 1.0


def _open_windows(driver: Any, links: list[str]) -> list[str]:
    """A window per link, each past its consent page; the window handles."""
    handles = []
    for n, link in enumerate(links):
        if n:
            driver.switch_to.new_window("window")
        driver.get(link)
        _send(driver, {}, "agree")
        assert "Label run" in driver.title
        handles.append(driver.current_window_handle)
    return handles


def _label_in_turns(driver: Any, windows: list[str], records: list[Any]) -> None:
    """Each window labels one turn, then the other does: annotator 1 gives the oracle's
    levels, annotator 2 calls every third party turn one level closer."""
    units = [0, 0]
    for n, record in enumerate(records):
        for handle in windows:
            driver.switch_to.window(handle)
            start = driver.find_element(By.CSS_SELECTOR, f"#episodes li:nth-child({n + 1}) a")
            driver.get(start.get_attribute("href"))
            assert "turn 1 of" in driver.title
        for turn in record.episode.turns:
            for who, handle in enumerate(windows):
                driver.switch_to.window(handle)
                closer = who == 1 and turn.role == "party" and units[who] % 3 == 0
                units[who] += turn.role == "party"
                _send(driver, _form(record.episode, turn, record.scenario, closer), "send")
        for handle in windows:
            driver.switch_to.window(handle)
            if "How did the mediator do?" in driver.title:
                _rate(driver)
            assert "Label run" in driver.title  # back at the list of episodes
