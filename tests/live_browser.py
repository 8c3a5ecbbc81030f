"""A real headless Chromium against a real server, for the browser tests (the report's
pages, the annotators' and the hosted table's) and for the scripts that take the docs'
screenshots: Debian's `chromium` and `chromium-driver`, driven by Selenium.

`headless_chromium()` raises `NoBrowser`, saying what is missing, where any of the
three is not installed; the session fixture `browser` (tests/conftest.py) skips on it.
"""

from __future__ import annotations

import base64
import shutil
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = ("chromium", "/usr/bin/chromium")
CHROMEDRIVER = ("chromedriver", "/usr/bin/chromedriver")
# How long a page may take to come: only a hung server gets near it, even on a 2-core
# machine at load 10, so no outcome depends on the machine's speed.
PAGE_WAIT_S = 300.0


class NoBrowser(RuntimeError):
    """Selenium, Chromium or its driver is not installed; the message says which."""


def _find(names: tuple[str, ...]) -> str | None:
    for name in names:
        found = shutil.which(name) or (name if Path(name).is_file() else None)
        if found:
            return found
    return None


@contextmanager
def headless_chromium(width: int = 1366, height: int = 900) -> Iterator[Any]:
    """One headless Chromium in a fresh profile directory, logging every console message
    so that a test can look for errors; quit on leaving."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        raise NoBrowser("selenium is not installed (pip install '.[browser]')") from None
    chromium, driver_path = _find(CHROMIUM), _find(CHROMEDRIVER)
    if chromium is None or driver_path is None:
        raise NoBrowser(
            "chromium or chromedriver not found (apt-get install chromium chromium-driver)"
        )
    with tempfile.TemporaryDirectory(prefix="disputelab-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for arg in (
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",  # a laptop's width by default
        ):
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(options=options, service=Service(driver_path))
        try:
            yield driver
        finally:
            driver.quit()


def click_and_wait(driver: Any, button: str) -> None:
    """Click the element with id `button` and wait until the next page has loaded."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    # Mark the page, then wait for one without the mark that has loaded: mid-navigation
    # the driver may answer with an error rather than a stale element, so errors wait.
    driver.execute_script("document.body.dataset.sent = '1'")
    driver.find_element(By.ID, button).click()
    WebDriverWait(driver, PAGE_WAIT_S, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script(
            "return document.readyState === 'complete' && document.body"
            " && document.body.dataset.sent === undefined"
        )
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def close_extra_windows(driver: Any) -> None:
    """Back to one window, the first, as the next test that shares the driver expects."""
    handles = driver.window_handles
    for handle in handles[1:]:
        driver.switch_to.window(handle)
        driver.close()
    driver.switch_to.window(handles[0])


def whole_page_png(driver: Any, path: Path) -> None:
    """The whole page, not only the window's view of it, as a PNG at `path`."""
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}
    )
    path.write_bytes(base64.b64decode(shot["data"]))
