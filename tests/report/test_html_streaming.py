"""The HTML report is written while the run is read: each block of episodes reaches the
page before the next block is read from the store, no more than the episode in hand is
alive, and the streamed page decodes to every stored turn."""

from __future__ import annotations

import asyncio
import gc
import io
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.report.html import CHUNK, write_run_html
from disputelab.store.sqlite import EpisodeRecord, Store
from tests.report.pages import cli, embedded, episodes

# Two runs of one grid, one twice the other: what the writer holds must not grow with it.
RUNS = {"short": 7, "long": 14}  # replicates: 28 and 56 episodes, two and three blocks


class WatchedStore(Store):
    """A store that notes, as each episode is read, how many episodes read before it
    are still alive and how many blocks of episodes the page being written holds."""

    page: io.StringIO
    alive: list[weakref.ref[EpisodeRecord]]
    seen: list[tuple[int, int]]  # (earlier episodes alive, blocks written), per read

    def watch(self, page: io.StringIO) -> None:
        self.page, self.alive, self.seen = page, [], []

    def load_episode(self, episode_id: str) -> EpisodeRecord:
        held = sum(ref() is not None for ref in self.alive)
        self.seen.append((held, self.page.getvalue().count('id="episodes-')))
        rec = super().load_episode(episode_id)
        self.alive.append(weakref.ref(rec))
        return rec


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WatchedStore]:
    root = tmp_path_factory.mktemp("streamed")
    built = Store(root)
    for name, replicates in RUNS.items():
        spec = ExperimentSpec(
            name=name,
            scenarios=["tenancy"],
            conditions=["general", "posture:competing"],
            replicates=replicates,
            budget=12,
        )
        asyncio.run(run_experiment(built, plan_experiment(spec, base=root), ModelHub(None)))
    built.close()
    watched = WatchedStore(root, writable=False)
    watched.watch(io.StringIO())
    yield watched
    watched.close()


@pytest.fixture(scope="module")
def written(store: WatchedStore) -> dict[str, tuple[str, list[tuple[int, int]]]]:
    """Each run's page, and what the store saw as the page was written. The collector
    is off meanwhile: an episode counts as held until nothing refers to it, so what only
    a reference cycle kept alive (until some later collection) counts too."""
    out = {}
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for run_id in RUNS:
            page = io.StringIO()
            store.watch(page)
            write_run_html(store, run_id, page)
            out[run_id] = (page.getvalue(), store.seen)
    finally:
        if was_enabled:
            gc.enable()
    return out


@pytest.mark.parametrize("run_id", list(RUNS))
def test_each_block_is_on_the_page_before_the_next_block_is_read(
    store: WatchedStore, written: dict[str, tuple[str, list[tuple[int, int]]]], run_id: str
) -> None:
    html, seen = written[run_id]
    reads = len(store.episode_ids(run_id))
    assert reads == 4 * RUNS[run_id] > CHUNK
    # The n-th episode read (from 0) finds every full block before it written out;
    # later reads are the tables' own (a scenario's domain), with every block out.
    assert [blocks for _, blocks in seen[:reads]] == [n // CHUNK for n in range(reads)]
    assert {blocks for _, blocks in seen[reads:]} <= {-(-reads // CHUNK)}
    assert html.count('id="episodes-') == -(-reads // CHUNK)


def test_the_writer_holds_one_episode_however_long_the_run(
    written: dict[str, tuple[str, list[tuple[int, int]]]],
) -> None:
    peaks = {run_id: max(held for held, _ in seen) for run_id, (_, seen) in written.items()}
    # When an episode is read, at most the one before it (still being tallied) is alive.
    assert peaks == {"short": 1, "long": 1}


def _decoded(ep: dict[str, Any], meta: dict[str, Any]) -> list[dict[str, Any]]:
    """An embedded episode's turns back as values, the way the page's script reads them."""
    strings, numbers, stances = meta["strings"], meta["numbers"], meta["stances"]
    topics = [t[0] for t in meta["scenarios"][ep["sc"]]["topics"]]
    roles = {"p": "party", "m": "mediator", "s": "system"}
    return [
        {
            "speaker": strings[ep["speaker"][i]],
            "role": roles[ep["role"][i]],
            "party_turn": ep["pturn"][i],
            "text": strings[ep["text"][i]],
            "consensus": None
            if ep["consensus"][i] < 0
            else dict(zip(topics, numbers[ep["consensus"][i]], strict=True)),
            "stances": None
            if ep["stance"][i] < 0
            else dict(zip(topics, stances[ep["stance"][i]], strict=True)),
        }
        for i in range(len(ep["text"]))
    ]


def _stored(rec: EpisodeRecord) -> list[dict[str, Any]]:
    return [
        {
            "speaker": t.speaker,
            "role": t.role,
            "party_turn": t.party_turn,
            "text": t.text,
            "consensus": None
            if not t.consensus
            else {k: round(v, 3) for k, v in t.consensus.items()},
            "stances": None
            if t.action is None or not t.action.stances
            else {k: s.option for k, s in t.action.stances.items()},
        }
        for t in rec.episode.turns
    ]


def test_the_streamed_page_decodes_to_every_stored_turn(
    store: WatchedStore, written: dict[str, tuple[str, list[tuple[int, int]]]]
) -> None:
    html = written["long"][0]
    meta = embedded(html, "report-meta")
    eps = episodes(html)
    assert [e["id"] for e in eps] == store.episode_ids("long")
    for ep in eps:
        rec = store.load_episode(ep["id"])
        assert _decoded(ep, meta) == _stored(rec), ep["id"]
        assert (ep["status"], ep["seed"], ep["condition"]) == (
            rec.status.value,
            rec.episode.seed,
            rec.episode.condition,
        )


def test_the_report_command_writes_the_same_page_into_its_out_file(
    store: WatchedStore, written: dict[str, tuple[str, list[tuple[int, int]]]], tmp_path: Path
) -> None:
    out = tmp_path / "report.html"
    cli(Path(store.root), "report", "short", "--format", "html", "--out", str(out))
    assert out.read_text(encoding="utf-8") == written["short"][0]
