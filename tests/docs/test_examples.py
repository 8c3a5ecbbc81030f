"""The README and the docs pages say what works: every block marked runnable is run.

Each page's runnable blocks run in order in a workspace of the page's own (a temporary
folder with its own store), so nothing is written into the clone; what a block shows
is compared with what it prints (tests/docs/runnable.py has the convention). A page
whose command no longer works, or prints something else than the page shows, fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from disputelab.errors import DisputelabError
from disputelab.scenario.datasets import case_files, data_root
from tests.docs.runnable import (
    REPO,
    Block,
    ExampleFailed,
    collect,
    commands,
    matches,
    normalise,
    pages,
    run_block,
    workspace,
)

RUNNABLE_PAGES = [page for page in pages() if collect(page)]


def _fetched(dataset: str) -> bool:
    try:
        return bool(case_files(dataset))
    except DisputelabError:
        return False


def _page_id(page: Path) -> str:
    return str(page.relative_to(REPO))


def test_the_readme_and_the_docs_have_runnable_blocks() -> None:
    readme = [page for page in RUNNABLE_PAGES if page.name == "README.md"]
    assert readme, "the README shows no runnable block"
    assert len(RUNNABLE_PAGES) >= 5


@pytest.mark.parametrize("page", RUNNABLE_PAGES, ids=_page_id)
def test_every_runnable_block_of_the_page_works(page: Path, tmp_path: Path) -> None:
    blocks = collect(page)
    needed = {b.attrs["needs"] for b in blocks if "needs" in b.attrs}
    missing = sorted(name for name in needed if not _fetched(name))
    env = workspace(tmp_path, data_root() if needed else None)
    ran = 0
    for block in blocks:
        if block.attrs.get("needs") in missing:
            continue
        run_block(block, tmp_path, env)
        ran += 1
    if missing:
        fetch = "; ".join(f"disputelab datasets get {name}" for name in missing)
        pytest.skip(f"{len(blocks) - ran} block(s) need data; {ran} ran. Enable with: {fetch}")


# The runner itself: it must fail on what a reader would see fail.


def _page(tmp_path: Path, body: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(body, encoding="utf-8")
    return page


def _run_page(page: Path, root: Path) -> None:
    env = workspace(root)
    for block in collect(page):
        run_block(block, root, env)


def test_a_command_that_no_longer_works_fails_its_page(tmp_path: Path) -> None:
    page = _page(tmp_path, "<!-- runnable -->\n```console\n$ disputelab run no-such-case\n```\n")
    (tmp_path / "ws").mkdir()
    with pytest.raises(ExampleFailed, match="no-such-case` exited 2"):
        _run_page(page, tmp_path / "ws")


def test_output_other_than_shown_fails_its_page(tmp_path: Path) -> None:
    body = "<!-- runnable -->\n```console\n$ disputelab scenarios list\nno such line\n```\n"
    (tmp_path / "ws").mkdir()
    with pytest.raises(ExampleFailed, match="printed what the page does not show"):
        _run_page(_page(tmp_path, body), tmp_path / "ws")


def test_an_expected_exit_status_is_checked(tmp_path: Path) -> None:
    body = "<!-- runnable: exit=2 -->\n```console\n$ disputelab scenarios show tenancy\n```\n"
    (tmp_path / "ws").mkdir()
    with pytest.raises(ExampleFailed, match="exited 0, not 2"):
        _run_page(_page(tmp_path, body), tmp_path / "ws")


def test_a_failing_python_block_fails_its_page(tmp_path: Path) -> None:
    body = '<!-- runnable -->\n```python\nimport disputelab as dl\ndl.run("no-such-case")\n```\n'
    (tmp_path / "ws").mkdir()
    with pytest.raises(ExampleFailed, match="the Python block failed"):
        _run_page(_page(tmp_path, body), tmp_path / "ws")


def test_commands_write_only_into_their_workspace(tmp_path: Path) -> None:
    body = "<!-- runnable -->\n```console\n$ disputelab run tenancy --budget 4\n```\n"
    (tmp_path / "ws").mkdir()
    _run_page(_page(tmp_path, body), tmp_path / "ws")
    assert (tmp_path / "ws" / "disputelab-runs" / "disputelab.sqlite").is_file()


def test_unmarked_blocks_are_not_collected(tmp_path: Path) -> None:
    page = _page(tmp_path, "```console\n$ disputelab run no-such-case\n```\n")
    assert collect(page) == []


def test_a_marker_must_stand_before_a_block(tmp_path: Path) -> None:
    with pytest.raises(ExampleFailed, match="not followed by a block"):
        collect(_page(tmp_path, "<!-- runnable -->\nsome prose\n"))


def test_shown_output_is_split_per_command(tmp_path: Path) -> None:
    block = Block(tmp_path / "p.md", 1, "console", "$ a\none\n...\n$ b\n")
    assert [(c.line, c.shown) for c in commands(block)] == [("a", ["one", "..."]), ("b", [])]


def test_run_ids_timings_and_the_workspace_are_normalised(tmp_path: Path) -> None:
    text = f"run 20261124-125414-1acb57 in {tmp_path}/x, 6 ms, 1.5 s"
    assert normalise(text, tmp_path) == ["run <run-id> in ./x, <time>, <time>"]


@pytest.mark.parametrize(
    ("shown", "printed", "fits"),
    [
        (["a", "b"], ["a", "b"], True),
        (["a", "..."], ["a", "b", "c"], True),
        (["...", "c"], ["a", "b", "c"], True),
        (["a", "...", "c"], ["a", "c"], True),
        (["lo..."], ["long line"], True),
        (["a", "b"], ["a", "c"], False),
        (["a"], ["a", "extra"], False),
        (["...", "z"], ["a", "b"], False),
    ],
)
def test_wildcards_match_as_documented(shown: list[str], printed: list[str], fits: bool) -> None:
    assert matches(shown, printed) is fits
