"""The HTML report of a 2,000-episode experiment: how long it takes to write, how big it
is, and how long a browser takes to open it.

1. *Experiment*: the first ten built-in scenarios x `general` and `posture:competing` x
   50 replicates x {unmediated twin, rule mediator}, budget 100: 2,000 rule episodes in a
   fresh store in a temp directory (run once, not timed here; see bench_experiment.py).
2. *Render*: the page written to a file as `disputelab report RUN --format html --out
   FILE` writes it (`api.write_report`), each render in a fresh process: wall-clock
   seconds and the process's peak resident memory (which includes some 200 MB of
   imports, shown apart as "before render"), and the file's size.
3. *Growth*: the same at 480, 1,000 and 2,000 episodes (replicates 12, 25, 50; with
   `--quick` 40, 120 and 200), renders interleaved across the sizes, so that time and
   memory can be seen to grow in step with the run.
4. *Load*: where Chromium, chromedriver and selenium are installed, headless Chromium
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
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from machine import machine_line

from disputelab import api
from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
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


def peak_mb() -> float:
    """This process's peak resident memory so far (Linux reports it in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def render_one(store: Path, out: Path) -> None:
    """In a child process: one render, its seconds and peak MB as a JSON line. The
    report's libraries (pandas, scipy, matplotlib) are imported first, outside the
    time; the memory they take is the "before render" figure."""
    import disputelab.report.html
    import disputelab.report.layout  # noqa: F401

    opened = Store(store, writable=False)
    opened.run_info("html-bench")  # the store open and read once, as the CLI has it
    before = peak_mb()
    t0 = time.perf_counter()
    api.write_report("html-bench", out, format="html", store=opened)
    seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "peak_mb": peak_mb(), "before_mb": before}))


def render_in_child(store: Path, out: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--render-one", str(store), str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"render failed: {done.stderr.strip()[-500:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def growth_rows(stores: dict[int, Path], renders: int, out: Path) -> list[tuple[str, str, str]]:
    """Renders interleaved across the sizes; per size, the median seconds and peak MB."""
    runs: dict[int, list[dict[str, float]]] = {n: [] for n in stores}
    for _ in range(renders):
        for n, store in stores.items():
            runs[n].append(render_in_child(store, out.with_name(f"report-{n}.html")))
    rows = []
    for n, rs in runs.items():
        secs = [r["seconds"] for r in rs]
        peaks = [r["peak_mb"] for r in rs]
        rows.append(
            (
                f"render {n} episodes",
                f"{statistics.median(secs):.2f} s",
                f"{min(secs):.2f}-{max(secs):.2f} s; peak {statistics.median(peaks):.0f} MB "
                f"({min(peaks):.0f}-{max(peaks):.0f}), "
                f"{statistics.median(r['before_mb'] for r in rs):.0f} MB before render",
            )
        )
    return rows


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--render-one":
        render_one(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--renders", type=int, default=3, help="timed renders per size (median)")
    ap.add_argument("--loads", type=int, default=5, help="timed browser loads (median)")
    ap.add_argument("--quick", action="store_true", help="200 episodes instead of 2,000")
    ap.add_argument("--out", type=Path, help="keep the largest run's HTML file here")
    args = ap.parse_args()
    if args.renders < 1 or args.loads < 1:
        ap.error("--renders and --loads must be at least 1")
    print(machine_line())

    with tempfile.TemporaryDirectory(prefix="bench-html-") as tmp:
        stores: dict[int, Path] = {}
        t0 = time.perf_counter()
        for replicates in (1, 3, 5) if args.quick else (12, 25, 50):
            root = Path(tmp) / f"store-{replicates}"
            store, episodes = build(root, replicates)
            store.close()
            stores[episodes] = root
        print(f"built {', '.join(map(str, stores))} episodes in {time.perf_counter() - t0:.1f} s")
        rows = growth_rows(stores, args.renders, Path(tmp) / "report.html")
        largest = max(stores)
        path = Path(tmp) / f"report-{largest}.html"
        if args.out:
            shutil.copyfile(path, args.out)
        rows.append(("file size", f"{path.stat().st_size / 1e6:.1f} MB", f"{largest} episodes"))
        rows += load_rows(path, args.loads)
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'median':>9}  range / note")
    for name, median, note in rows:
        print(f"{name:<{width}}  {median:>9}  {note}")
    if args.out:
        print(f"wrote {args.out}")


def load_rows(path: Path, loads: int) -> list[tuple[str, str, str]]:
    """Browser load times of the page, where a browser is installed."""
    driver = browser()
    if driver is None:
        return []
    try:
        cold = load_ms(driver, path.as_uri())
        times = [load_ms(driver, path.as_uri()) for _ in range(loads)]
    finally:
        driver.quit()
    return [
        ("first load, cold browser", f"{cold / 1000:.2f} s", "once"),
        (
            "browser load to ready",
            f"{statistics.median(times) / 1000:.2f} s",
            f"{min(times) / 1000:.2f}-{max(times) / 1000:.2f} s over {loads}",
        ),
    ]


if __name__ == "__main__":
    main()
