"""The HTML report of a 2,000-episode experiment: how long it takes to write, how big it
is, and how long a browser takes to open it.

1. *Experiment*: the first ten built-in scenarios x `general` and `posture:competing` x
   50 replicates x {unmediated twin, rule mediator}, budget 100: 2,000 rule episodes in a
   fresh store in a temp directory (run once, not timed here; see bench_experiment.py).
2. *Render*: `run_html` on that run, as `disputelab report RUN --format html` calls it:
   wall-clock seconds per render, and the file's size.
3. *Load*: where Chromium, chromedriver and selenium are installed, headless Chromium
   opens the file from disk, each time in a fresh tab; the time is from navigation start
   to the marker the page's script sets once the summary, tables, plots, the episode
   table's first page and the first episode are on screen (`window.__reportReady`, in
   ms since navigation start). The median of `--loads` loads after a first one, which is
   reported on its own: the browser has just started and its caches are cold.

Usage: python benchmarks/bench_html_report.py [--renders R] [--loads N] [--quick] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from machine import machine_line

from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.report.html import run_html
from disputelab.store.sqlite import Store

CONDITIONS = ["general", "posture:competing"]


def spec(replicates: int) -> ExperimentSpec:
    """10 scenarios x 2 conditions x replicates x {twin, rule}: 40 x replicates episodes."""
    return ExperimentSpec(
        name="html-bench",
        scenarios=["builtin:*"],
        limit_scenarios=10,
        conditions=CONDITIONS,
        mediators=["rule"],
        replicates=replicates,
        budget=100,
        concurrency=4,
    )


def build(root: Path, replicates: int) -> tuple[Store, int]:
    store = Store(root)
    summary = asyncio.run(
        run_experiment(store, plan_experiment(spec(replicates), base=root), ModelHub(None))
    )
    if summary.failed:
        raise SystemExit(f"{summary.failed} episodes failed: {summary.errors[0]}")
    return store, summary.done


def browser() -> Any | None:
    """Headless Chromium through selenium, or None (with a line saying why)."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        print("selenium not installed: no browser load times")
        return None
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver is None:
        print("chromium or chromedriver not found: no browser load times")
        return None
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    profile = tempfile.mkdtemp(prefix="bench-chromium-")
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        f"--user-data-dir={profile}",
        "--window-size=1366,900",
    ):
        options.add_argument(arg)
    return webdriver.Chrome(options=options, service=Service(driver))


def load_ms(driver: Any, url: str) -> float:
    """Navigation start to the page's ready marker, in a fresh tab."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.switch_to.new_window("tab")
    driver.get(url)
    WebDriverWait(driver, 120).until(lambda d: d.execute_script("return window.__reportReady"))
    ms = float(driver.execute_script("return window.__reportReady"))
    old = driver.current_window_handle
    driver.close()
    driver.switch_to.window(next(h for h in driver.window_handles if h != old))
    return ms


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--renders", type=int, default=3, help="timed renders (median)")
    ap.add_argument("--loads", type=int, default=5, help="timed browser loads (median)")
    ap.add_argument("--quick", action="store_true", help="200 episodes instead of 2,000")
    ap.add_argument("--out", type=Path, help="keep the HTML file here")
    args = ap.parse_args()
    if args.renders < 1 or args.loads < 1:
        ap.error("--renders and --loads must be at least 1")
    print(machine_line())

    with tempfile.TemporaryDirectory(prefix="bench-html-") as tmp:
        t0 = time.perf_counter()
        store, episodes = build(Path(tmp), 5 if args.quick else 50)
        print(f"built {episodes} episodes in {time.perf_counter() - t0:.1f} s (not timed below)")
        renders = []
        for _ in range(args.renders):
            t0 = time.perf_counter()
            html = run_html(store, "html-bench")
            renders.append(time.perf_counter() - t0)
        path = args.out or Path(tmp) / "report.html"
        path.write_text(html, encoding="utf-8")
        size = path.stat().st_size
        store.close()

        rows = [
            (
                "render (run_html)",
                f"{statistics.median(renders):.2f} s",
                f"{min(renders):.2f}-{max(renders):.2f} s over {args.renders}",
            ),
            ("file size", f"{size / 1e6:.1f} MB", f"{episodes} episodes, one file"),
        ]
        driver = browser()
        if driver is not None:
            try:
                cold = load_ms(driver, path.as_uri())
                loads = [load_ms(driver, path.as_uri()) for _ in range(args.loads)]
            finally:
                driver.quit()
            rows.append(("first load, cold browser", f"{cold / 1000:.2f} s", "once"))
            rows.append(
                (
                    "browser load to ready",
                    f"{statistics.median(loads) / 1000:.2f} s",
                    f"{min(loads) / 1000:.2f}-{max(loads) / 1000:.2f} s over {args.loads}",
                )
            )
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'median':>9}  range / note")
    for name, median, note in rows:
        print(f"{name:<{width}}  {median:>9}  {note}")
    if args.out:
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
