"""Two people at a hosted `tenancy` table, each in a window of one headless Chromium,
playing through their invite links and the page's own controls: what
tests/web/test_host_browser.py checks and scripts/host_screenshots.py photographs.

`disputelab host` runs as a real server process. A page says whose move it is: it shows
the move's form (`#move`) to the seat asked, `Waiting for the others…` (`#waiting`) to
the rest, and `#ended` once the episode has stopped; it reloads itself when its seat's
view changes. So the people here wait on what their page shows, never on time.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.live_browser import PAGE_WAIT_S, click_and_wait, free_port, whole_page_png

REPO = Path(__file__).resolve().parents[2]
SEATS = ("parties:tenant", "parties:landlord")
ANSWERS = {"satisfaction": "4", "fairness": "5", "trust_mediator": "3"}
_RELOADS = 10  # a page reloads under a form rarely (a seat's view changed): more is a fault
SHOT_AT = 2  # the move both pages are photographed at: the tenant's second


@dataclass(frozen=True)
class Move:
    """One move as a person makes it: per topic the option backed, then others they
    would accept; the signal; and their words."""

    stances: dict[str, tuple[str, ...]]
    signal: str
    words: str


# Each opens with its own first choices, then both settle on the middle options (B) and
# signal consensus, which ends the roundtable as resolved at the fourth party turn.
MOVES = {
    "parties:tenant": (
        Move(
            {"repairs": ("A", "B"), "arrears": ("C", "B"), "rent": ("A", "B"), "lease": ("B",)},
            "continue",
            "The mould has to be treated properly before I sign anything.",
        ),
        Move(
            {t: ("B",) for t in ("repairs", "arrears", "rent", "lease")},
            "consensus",
            "I can live with the middle way on every point.",
        ),
    ),
    "parties:landlord": (
        Move(
            {"repairs": ("C", "B"), "arrears": ("A", "B"), "rent": ("D", "C"), "lease": ("A",)},
            "continue",
            "I need the arrears paid and the rent brought up to market.",
        ),
        Move(
            {t: ("B",) for t in ("repairs", "arrears", "rent", "lease")},
            "consensus",
            "Agreed: the middle way on every point.",
        ),
    ),
}


@contextmanager
def hosted(store: Path, *extra: str) -> Iterator[tuple[subprocess.Popen[str], dict[str, str]]]:
    """`disputelab host tenancy` with the rule mediator, a person at each party's seat,
    on a free port; the server and each seat's link as it prints them. The server is
    killed on leaving if it is still up."""
    command = [sys.executable, "-m", "disputelab", "--store", str(store), "host", "tenancy",
               "--mediator", "rule", "--budget", "8", "--port", str(free_port()),
               *(a for s in SEATS for a in ("--seat", s)), *extra]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) as server:
        try:
            yield server, _links(server)
        finally:
            if server.poll() is None:
                server.kill()


def _links(server: subprocess.Popen[str]) -> dict[str, str]:
    links: dict[str, str] = {}
    assert server.stdout is not None
    for line in server.stdout:
        print(line, end="")  # shown with -s: the real output of the command
        found = re.match(r"(parties:\w+): (http://\S+)", line)
        if found:
            links[found[1]] = found[2]
        if len(links) == len(SEATS):
            return links
    raise AssertionError(f"the server ended before printing its links: {server.wait()}")


def take_seats(driver: Any, links: dict[str, str]) -> dict[str, str]:
    """A window per seat, each past its consent page; the window handle of each seat."""
    windows = {}
    for n, seat in enumerate(SEATS):
        if n:
            driver.switch_to.new_window("window")
        driver.get(links[seat])
        assert driver.find_element(By.ID, "consent").text
        click_and_wait(driver, "agree")
        windows[seat] = driver.current_window_handle
    return windows


def shown(driver: Any) -> tuple[str, int]:
    """What the page shows (`move`, `waiting`, `ended` or `` mid-load) and how many
    lines of dialogue."""
    return tuple(  # type: ignore[return-value]
        driver.execute_script(
            "const s = ['move', 'ended', 'waiting'].find(i => document.getElementById(i));"
            "return [document.readyState === 'complete' && s || '',"
            " document.querySelectorAll('#dialogue .line').length];"
        )
    )


def _next(driver: Any, windows: dict[str, str], heard: dict[str, int]) -> str:
    """The seat whose page asks a move of it now, or '' once every page shows the end.
    A seat is asked again only once the dialogue has grown since its last move (the
    page just posted may still show the form it answered)."""

    def asked(d: Any) -> list[str] | None:  # a list: '' alone would read as "not yet"
        states = {}
        for seat, handle in windows.items():
            d.switch_to.window(handle)
            states[seat] = shown(d)
            if states[seat][0] == "move" and states[seat][1] > heard[seat]:
                return [seat]
        return [""] if all(s == "ended" for s, _ in states.values()) else None

    wait = WebDriverWait(driver, PAGE_WAIT_S, ignored_exceptions=(WebDriverException,))
    return str(wait.until(asked)[0])


def make(driver: Any, move: Move) -> None:
    """Fill the page's form as a person would and send it."""
    for topic, (backed, *also) in move.stances.items():
        name = f"stance:{topic}"
        driver.find_element(
            By.CSS_SELECTOR, f'input.backed[name="{name}"][value="{backed}"]'
        ).click()
        for box in driver.find_elements(By.CSS_SELECTOR, f'input.also[name="{name}"]'):
            if box.is_selected() != (box.get_attribute("value") in also):
                box.click()
    driver.find_element(By.CSS_SELECTOR, f'input[name="signal"][value="{move.signal}"]').click()
    say = driver.find_element(By.NAME, "say")
    say.clear()
    say.send_keys(move.words)
    click_and_wait(driver, "send")


def negotiate(
    driver: Any, windows: dict[str, str], before: Callable[[int, str], None] | None = None
) -> list[tuple[str, Move]]:
    """Each seat makes its moves as its page asks, until every page shows the end; the
    moves made, in order. `before(n, seat)` is called as the seat is asked its move n."""
    heard = dict.fromkeys(windows, -1)
    made: list[tuple[str, Move]] = []
    reloads = 0
    while seat := _next(driver, windows, heard):
        driver.switch_to.window(windows[seat])
        if before:
            before(len(made), seat)
            driver.switch_to.window(windows[seat])
        before_move, heard[seat] = heard[seat], shown(driver)[1]
        move = MOVES[seat][sum(s == seat for s, _ in made)]
        try:
            make(driver, move)
        except WebDriverException:  # the page reloaded under the form: asked again
            reloads += 1
            if reloads > _RELOADS:
                raise
            heard[seat] = before_move
            continue
        made.append((seat, move))
    return made


def same_turn(driver: Any, windows: dict[str, str], asked: str) -> None:
    """Wait until every page shows as many lines of dialogue as the seat asked: all at
    the same turn (a waiting page reloads as the others speak)."""
    driver.switch_to.window(windows[asked])
    lines = shown(driver)[1]

    def caught_up(d: Any) -> bool:
        for handle in windows.values():
            d.switch_to.window(handle)
            if shown(d)[1] != lines:
                return False
        return True

    WebDriverWait(driver, PAGE_WAIT_S, ignored_exceptions=(WebDriverException,)).until(caught_up)


def photograph(driver: Any, windows: dict[str, str], asked: str, paths: dict[str, Path]) -> None:
    """Each seat's whole page as a PNG at its path, once all are at the turn `asked`
    is asked (nothing changes on any page until it moves)."""
    same_turn(driver, windows, asked)
    for seat, path in paths.items():
        driver.switch_to.window(windows[seat])
        whole_page_png(driver, path)


def answer_questions(driver: Any, windows: dict[str, str]) -> None:
    """Each person follows their page's link to the questionnaire and answers it."""
    for handle in windows.values():
        driver.switch_to.window(handle)
        driver.find_element(By.ID, "questionnaire").click()
        WebDriverWait(driver, PAGE_WAIT_S, ignored_exceptions=(WebDriverException,)).until(
            lambda d: d.find_element(By.ID, "questions")
        )
        for key, value in ANSWERS.items():
            driver.find_element(By.CSS_SELECTOR, f'input[name="{key}"][value="{value}"]').click()
        click_and_wait(driver, "answer")
