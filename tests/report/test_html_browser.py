"""The HTML report in a real browser: headless Chromium (Debian's `chromium` and
`chromium-driver`) through Selenium, with a fresh profile. The page loads without a
console error or a single request, the viewer moves between episodes, the thought
toggle works, tables sort and export, and injected markup stays text.

No test here times anything; `benchmarks/bench_html_report.py` measures load time."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from disputelab.report.html import run_html
from disputelab.report.serve import ReportServer
from disputelab.store.sqlite import Store
from tests.report.pages import PAYLOADS, cli, motivated_run, payload_scenario, small_experiment

pytest.importorskip("selenium", reason="selenium is not installed (pip install '.[browser]')")

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

pytestmark = pytest.mark.slow  # drives headless Chromium


def _write(store: Store, run_id: str, path: Path) -> str:
    path.write_text(run_html(store, run_id), encoding="utf-8")
    return path.as_uri()


@pytest.fixture(scope="module")
def experiment_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    """A 28-episode experiment's report (two blocks of embedded episodes) and its ids."""
    root = tmp_path_factory.mktemp("experiment")
    store = small_experiment(root)
    return _write(store, "small", root / "small.html"), store.episode_ids("small")


@pytest.fixture(scope="module")
def motivated_page(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("motivated")
    run_id = motivated_run(root)
    return _write(Store(root), run_id, root / "motivated.html")


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """The browser, its console cleared of earlier pages' messages."""
    browser.get_log("browser")
    yield browser


def _ready(driver: Any) -> None:
    WebDriverWait(driver, 60).until(
        lambda d: d.execute_script("return document.documentElement.dataset.ready === '1'")
    )


def _load(driver: Any, url: str) -> None:
    driver.get(url)
    _ready(driver)


def _errors(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _shown_id(driver: Any) -> str:
    return str(driver.find_element(By.ID, "ep-id").text)


def test_the_report_loads_with_no_console_error_and_no_request(
    page: Any, experiment_page: tuple[str, list[str]]
) -> None:
    url, _ = experiment_page
    _load(page, url)
    assert _errors(page) == []
    assert page.execute_script("return performance.getEntriesByType('resource').length") == 0
    # Every figure decoded: an image that failed would have no width.
    widths = page.execute_script("return [...document.images].map(i => i.naturalWidth)")
    assert len(widths) == 3 and all(w > 0 for w in widths)
    assert page.find_elements(By.CSS_SELECTOR, "#topic-charts svg")


def test_next_and_previous_move_the_viewer_between_episodes(
    page: Any, experiment_page: tuple[str, list[str]]
) -> None:
    url, ids = experiment_page
    _load(page, url)
    assert _shown_id(page) == ids[0]
    page.find_element(By.ID, "next").click()
    assert _shown_id(page) == ids[1]
    page.find_element(By.ID, "prev").click()
    assert _shown_id(page) == ids[0]
    assert not page.find_element(By.ID, "prev").is_enabled()
    # The last episode lives in a later block of embedded data, read when first shown.
    page.execute_script(f"location.hash = '#episode-{len(ids)}'")
    WebDriverWait(page, 10).until(
        lambda d: d.execute_script("return window.disputelab.current()") == len(ids) - 1
    )
    assert _shown_id(page) == ids[-1]
    assert not page.find_element(By.ID, "next").is_enabled()
    assert _errors(page) == []


def test_the_thought_toggle_shows_and_hides_private_thoughts(
    page: Any, motivated_page: str, tmp_path: Path
) -> None:
    _load(page, motivated_page)
    thoughts = page.find_elements(By.CSS_SELECTOR, "#episode .thoughts")
    assert thoughts and not any(t.is_displayed() for t in thoughts)
    toggle = page.find_element(By.ID, "show-thoughts")
    toggle.click()
    assert all(t.is_displayed() for t in thoughts)
    first = thoughts[0].text
    assert "thought:" in first and "motivation" in first
    page.execute_script("arguments[0].scrollIntoView({block: 'center'})", thoughts[0])
    shot = tmp_path / "thoughts.png"
    assert page.save_screenshot(str(shot)) and shot.read_bytes()[:4] == b"\x89PNG"
    print(f"screenshot: {shot}")
    toggle.click()
    assert not any(t.is_displayed() for t in thoughts)
    # The choice holds as the viewer moves on.
    toggle.click()
    page.find_element(By.ID, "next").click()
    shown = page.find_elements(By.CSS_SELECTOR, "#episode .thoughts")
    assert shown and all(t.is_displayed() for t in shown)
    assert _errors(page) == []


def test_injected_markup_renders_as_text_and_never_runs(page: Any, tmp_path: Path) -> None:
    path = payload_scenario(tmp_path / "payload.yaml")
    assert "ok" in cli(tmp_path, "scenarios", "validate", str(path))
    cli(tmp_path, "run", str(path), "--mediator", "rule", "--budget", "12")
    store = Store(tmp_path)
    url = _write(store, store.resolve_run("last"), tmp_path / "payload.html")
    _load(page, url)
    page.find_element(By.ID, "show-thoughts").click()
    page.find_element(By.ID, "next").click()  # the mediated episode, with its interventions
    assert page.execute_script("return typeof window.__pwned") == "undefined"
    text = page.find_element(By.TAG_NAME, "body").text
    for payload in PAYLOADS:
        assert payload in text
    assert (
        page.execute_script("return document.querySelectorAll('[onerror], script[src]').length")
        == 0
    )
    assert (
        page.execute_script("return document.querySelectorAll('a[href^=\"javascript:\"]').length")
        == 0
    )
    page.execute_script("document.getElementById('viewer').scrollIntoView()")
    shot = tmp_path / "payloads.png"
    assert page.save_screenshot(str(shot)) and shot.read_bytes()[:4] == b"\x89PNG"
    print(f"screenshot: {shot}")
    assert _errors(page) == []


def test_tables_sort_on_a_header_click_and_download_as_csv(
    page: Any, experiment_page: tuple[str, list[str]]
) -> None:
    url, ids = experiment_page
    _load(page, url)
    table = page.find_element(By.CSS_SELECTOR, "#episode-table table")
    header = [th.text for th in table.find_elements(By.CSS_SELECTOR, "thead th")]
    seed = table.find_element(By.XPATH, f".//thead/tr/th[{header.index('seed') + 1}]")

    def seeds() -> list[int]:
        cells = table.find_elements(
            By.CSS_SELECTOR, f"tbody td:nth-child({header.index('seed') + 1})"
        )
        return [int(c.text) for c in cells]

    seed.click()
    assert seeds() == sorted(seeds()) and seeds()[0] == 0
    seed.click()
    assert seeds() == sorted(seeds(), reverse=True) and seeds()[0] == 6
    csv = page.execute_script("return window.disputelab.tableCsv(arguments[0])", table)
    lines = csv.strip().split("\n")
    assert lines[0].split(",")[: len(header)] == header and len(lines) == len(ids) + 1
    # Every table on the page offers its download.
    buttons = page.find_elements(By.CSS_SELECTOR, ".table-tools button")
    assert len([b for b in buttons if b.text == "Download CSV"]) == len(
        page.find_elements(By.CSS_SELECTOR, "table.data")
    )
    assert _errors(page) == []


def test_view_serves_the_run_list_and_each_report_to_the_browser(
    page: Any, motivated_page: str
) -> None:
    root = Path(motivated_page.removeprefix("file://")).parent
    server = ReportServer(root, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        _load(page, server.url)
        (link,) = page.find_elements(By.CSS_SELECTOR, "#run-table a")
        run_id = link.text
        link.click()
        WebDriverWait(page, 60).until(lambda d: d.current_url != server.url)
        _ready(page)
        assert page.current_url == f"{server.url}run/{run_id}"
        assert _shown_id(page).startswith(run_id)
        count = "return JSON.parse(document.getElementById('report-meta').textContent).count"
        assert page.execute_script(count) == 2
        assert _errors(page) == []
    finally:
        server.shutdown()
        server.server_close()
