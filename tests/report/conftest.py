"""Headless Chromium for the report's browser tests, from Debian's `chromium` and
`chromium-driver` packages, driven by Selenium. Where any of the three is missing, the
tests that ask for a browser skip and say which."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = ("chromium", "/usr/bin/chromium")
CHROMEDRIVER = ("chromedriver", "/usr/bin/chromedriver")


def _find(names: tuple[str, ...]) -> str | None:
    for name in names:
        found = shutil.which(name) or (name if Path(name).is_file() else None)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the session, in a fresh profile directory, logging
    every console message so a test can look for errors."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install '.[browser]'); browser tests skipped")
    chromium, driver_path = _find(CHROMIUM), _find(CHROMEDRIVER)
    if chromium is None or driver_path is None:
        pytest.skip(
            "chromium or chromedriver not found (apt-get install chromium chromium-driver); "
            "browser tests skipped"
        )
    with tempfile.TemporaryDirectory(prefix="disputelab-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for arg in (
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--user-data-dir={profile}",
            "--window-size=1366,900",  # a laptop's width
        ):
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(options=options, service=Service(driver_path))
        try:
            yield driver
        finally:
            driver.quit()
