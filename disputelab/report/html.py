"""The visual report: one self-contained HTML file per run.

The page holds the run's summary, the protocol's experiment tables (the same markdown
tables `report` prints, laid out as HTML), the experiment plots as inline SVG, a table
of every episode, and an episode viewer. The viewer's data is embedded as JSON in
`<script type="application/json">` blocks, one per page of episodes, and the page's own
script builds an episode's transcript and charts from it only when it is shown; so the
file makes no request and opens fast however many episodes it holds.

The page is written as the run is read: each block goes out as soon as its episodes are
packed, so memory holds one block and the run-wide tables (strings, rows, curves), never
every episode. The blocks come first, in `<head>`, because the summary, tables and
plots above the viewer need the whole run; the page's script reads them by id.

Nothing from a scenario or a transcript is ever written into the page as markup: the
template escapes it (jinja2 autoescape), the JSON blocks have `<`, `>` and `&` escaped so
user text cannot close its script element, and the script sets text with `textContent`.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import io
import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import IO, Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from disputelab.compare import BY, CompareError, compare
from disputelab.episode import Episode
from disputelab.protocols.base import get_protocol
from disputelab.protocols.view import EpisodeView, default_view
from disputelab.registry import UnknownPluginError
from disputelab.report.blocks import Block, markdown_blocks
from disputelab.report.html_data import OfferPaths, Packer, TopicCurves
from disputelab.report.layout import protocol_tables
from disputelab.report.plots import Curves, add_curve, experiment_figures, figure_svg
from disputelab.report.render import episode_row
from disputelab.store.sqlite import EpisodeRecord, Store, StoredScore
from disputelab.tables.grids import spec_conditions

CHUNK = 25  # episodes per embedded JSON block: the viewer parses one block at a time
# Columns of the episode table, before the metrics; run-wide ones (run, protocol) and
# the matched twin's long id are left to the CSV export of `report --format csv`.
EPISODE_COLUMNS = ("episode_id", "arm", "scenario_id", "condition", "mediator", "parties")
EPISODE_TAIL = ("seed", "status", "stop_reason")
_HIDDEN = {"run_id", "protocol", "matched_episode_id"}
CAPTIONS = {
    "trajectories": "Mean oracle consensus after each party turn, mediated (solid) vs "
    "unmediated (dashed), one panel per condition.",
    "gain_shift": "Each condition's mean consensus gain minus the reference condition's, "
    "per mediator; colours are the socio-cognitive axes.",
    "axis_gain": "The same shift averaged over each axis's conditions; bars span their range.",
}


def script_json(data: Any) -> Markup:
    """JSON for a `<script type="application/json">` element. `<`, `>` and `&` are
    written as JSON escapes, so no string can close the element or open a comment;
    NaN is refused, as JSON.parse would refuse it."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    return Markup(text)  # escaped above for this context


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def content_policy(style: str, script: str) -> str:
    """The page's Content-Security-Policy: no requests of any kind, images only from
    data: URIs, and only this page's own style sheet and script, named by their hashes.
    Were anything ever to slip past the escaping, an injected script or event handler
    would still not run."""
    return (
        f"default-src 'none'; img-src data:; style-src {_hash(style)}; "
        f"script-src {_hash(script)}; base-uri 'none'; form-action 'none'"
    )


def _asset(name: str) -> Markup:
    """Hand-written script or style sheet shipped beside the template, to inline."""
    text = resources.files("disputelab.report").joinpath("templates", name).read_text("utf-8")
    if "</" + "script" in text.lower() or "</" + "style" in text.lower():
        raise ValueError(f"{name} would close its own element")
    return Markup(text)  # our own file, not user text


def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("disputelab.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env


def episode_view(episode: Episode) -> EpisodeView:
    """The episode's protocol view; the default one when the protocol that played it is
    not installed here (a plug-in's run read elsewhere)."""
    try:
        return get_protocol(episode.protocol).episode_view(episode)
    except UnknownPluginError:
        return default_view(episode)


@dataclass(frozen=True)
class StoredEpisode:
    """One episode as the report reads it: the record, its scores and its model usage."""

    record: EpisodeRecord
    scores: list[StoredScore]
    usage: list[dict[str, Any]]


def stored_episodes(store: Store, run_id: str) -> Iterator[StoredEpisode]:
    """The run's episodes in order, read one at a time as the caller asks for them."""
    for eid in store.episode_ids(run_id):
        rec = store.load_episode(eid)
        yield StoredEpisode(rec, store.scores(eid) if rec.complete else [], store.usage(eid))


class EpisodeBlocks:
    """Packed episodes written to `out` as `<script type="application/json">` blocks of
    CHUNK, each as soon as it is full: the page never holds more than one block."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.count = 0
        self._block: list[dict[str, Any]] = []

    def add(self, packed: dict[str, Any]) -> None:
        self._block.append(packed)
        self.count += 1
        if len(self._block) == CHUNK:
            self.flush()

    def flush(self) -> None:
        if self._block:
            number = (self.count - 1) // CHUNK
            self.out.write(f'<script type="application/json" id="episodes-{number}">')
            self.out.write(script_json(self._block))
            self.out.write("</script>\n")
            self._block = []


@dataclass
class _Collected:
    """What one pass over a run's episodes gathers for the page, besides the episodes
    themselves, which go out as they are packed."""

    packer: Packer = field(default_factory=Packer)
    rows: list[dict[str, Any]] = field(default_factory=list)
    curves: Curves = field(default_factory=lambda: defaultdict(list))
    topics: TopicCurves = field(default_factory=TopicCurves)
    offers: OfferPaths = field(default_factory=OfferPaths)
    statuses: Counter[str] = field(default_factory=Counter)
    titles: dict[str, str] = field(default_factory=dict)  # scenario id -> title
    cost: float | None = 0.0  # None once any model call's price is unknown
    calls: int = 0


def _collect(
    store: Store, episodes: Iterable[StoredEpisode], experiment: bool, blocks: EpisodeBlocks
) -> _Collected:
    """Read each episode once, write its packed form to `blocks` and keep only the
    run-wide tallies, so a big run is never held in memory."""
    c = _Collected()
    for stored in episodes:
        rec, scores, usage = stored.record, stored.scores, stored.usage
        c.rows.append(episode_row(store, rec, scores))
        blocks.add(c.packer.episode(rec, scores, usage, episode_view(rec.episode)))
        c.statuses[rec.status.value] += 1
        c.titles.setdefault(rec.episode.scenario_id, str(rec.scenario.get("title", "")))
        for u in usage:
            c.calls += u["calls"]
            c.cost = None if c.cost is None or u["cost_usd"] is None else c.cost + u["cost_usd"]
        if rec.complete:
            c.topics.add(rec, scores)
            c.offers.add(rec)
            if experiment:
                add_curve(c.curves, rec.episode_id, rec.episode)
    blocks.flush()
    return c


def _summary(run: dict[str, Any], config: dict[str, Any], c: _Collected) -> list[tuple[str, str]]:
    def text(value: Any) -> str:
        if isinstance(value, list | dict):
            return json.dumps(value, ensure_ascii=False)
        return "-" if value in (None, "") else str(value)

    created = dt.datetime.fromtimestamp(run["created_at"]).strftime("%Y-%m-%d %H:%M")
    facts = [
        ("run", run["run_id"]),
        ("kind", run["kind"]),
        ("label", text(run["label"])),
        ("created", created),
        ("status", f"{run['status']}: {run['complete']} of {run['planned']} episodes done"),
        ("episodes by status", ", ".join(f"{k} {n}" for k, n in c.statuses.most_common())),
        ("disputes", _titles(c.titles)),
        ("model calls", str(c.calls)),
        ("cost (USD)", "unknown" if c.cost is None else f"{c.cost:.4f}"),
    ]
    facts += [(k, text(v)) for k, v in config.items() if v not in (None, "", [], {})]
    return facts


def _titles(titles: dict[str, str], shown: int = 6) -> str:
    named = [f"{title} ({sid})" for sid, title in sorted(titles.items())]
    more = f"; and {len(named) - shown} more" if len(named) > shown else ""
    return "; ".join(named[:shown]) + more or "-"


def episode_table(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The episode table as columns and rows of values, for the page's script to show a
    page at a time: as markup, 2,000 rows of 20 cells took the browser seconds to lay
    out before anything else could show."""
    seen: list[str] = []
    for r in rows:
        seen += [k for k in r if k not in seen]
    metrics = [k for k in seen if k not in (*EPISODE_COLUMNS, *EPISODE_TAIL, *_HIDDEN)]
    columns = [*EPISODE_COLUMNS, *EPISODE_TAIL, *metrics]

    def value(v: Any) -> Any:
        if isinstance(v, float):
            return None if math.isnan(v) else round(v, 4)
        return v

    return {"columns": columns, "rows": [[value(r.get(c)) for c in columns] for r in rows]}


def _figures(store: Store, run_id: str, config: dict[str, Any], curves: Curves) -> list[Any]:
    if not curves:
        return []
    figures = experiment_figures(store, run_id, spec_conditions(config), curves)
    # As <img> sources, SVG cannot run script, whatever text the figures carry.
    return [
        (
            name,
            "data:image/svg+xml;base64," + base64.b64encode(figure_svg(fig)).decode("ascii"),
            CAPTIONS.get(name, name),
        )
        for name, fig in figures
    ]


def _tables(store: Store, run_id: str, config: dict[str, Any]) -> list[Block]:
    try:
        blocks = markdown_blocks(protocol_tables(store, run_id, config))
    except UnknownPluginError as exc:
        return markdown_blocks(f"> No tables: {exc}")
    # The layouts' top heading names the run, which the page's header already does.
    blocks = [b for b in blocks if not (b.kind == "heading" and b.level == 1)]
    return blocks + _leaderboard(store, run_id, config)


def _leaderboard(store: Store, run_id: str, config: dict[str, Any]) -> list[Block]:
    """The models of a run with a model axis, ranked on the default metric."""
    if not config.get("backbones"):
        return []
    try:
        board = compare(store, [run_id])
    except CompareError as exc:
        return markdown_blocks(f"## Leaderboard\n\n> No leaderboard: {exc}")
    return markdown_blocks(board.to_markdown())


def write_run_html(store: Store, run_id: str, out: IO[str]) -> None:
    """The whole report of one run (single run or experiment) as an HTML document,
    written to `out` while the run is read: each block of episodes goes out as soon as
    it is packed, so memory holds one block and the run-wide tables, not the run."""
    kind, config = store.run_info(run_id)
    run = store.run_summary(run_id)
    experiment = kind == "experiment"
    style, script = _asset("report.css"), _asset("report.js")
    env = _env()
    csp = content_policy(style, script)
    head = env.get_template("report_head.html.j2").render(csp=csp, run=run, style=style)
    out.write(head + "\n")
    blocks = EpisodeBlocks(out)
    c = _collect(store, stored_episodes(store, run_id), experiment, blocks)
    rest = env.get_template("report.html.j2").generate(
        run=run,
        summary=_summary(run, config, c),
        tables=_tables(store, run_id, config) if experiment else [],
        figures=_figures(store, run_id, config, c.curves) if experiment else [],
        episodes=blocks.count,
        table=script_json(episode_table(c.rows)),
        meta=script_json(
            {
                "count": blocks.count,
                "chunk": CHUNK,
                "topics": c.topics.data(),
                "offers": c.offers.data(),
                **c.packer.tables(),
            }
        ),
        script=script,
    )
    out.writelines(rest)


def run_html(store: Store, run_id: str) -> str:
    """The report `write_run_html` writes, as one string (for the `view` server)."""
    page = io.StringIO()
    write_run_html(store, run_id, page)
    return page.getvalue()


def index_html(store: str, runs: list[dict[str, Any]]) -> str:
    """The `view` server's front page: every run of the store, newest first, with a
    filter over them and a button that compares the ticked ones."""
    rows = [
        {**r, "created": dt.datetime.fromtimestamp(r["created_at"]).strftime("%Y-%m-%d %H:%M")}
        for r in reversed(runs)
    ]
    style, script = _asset("report.css"), _asset("report.js")
    return (
        _env()
        .get_template("index.html.j2")
        .render(
            csp=content_policy(style, script),
            store=store,
            runs=rows,
            kinds=sorted({str(r["kind"]) for r in rows}),
            statuses=sorted({str(r["status"]) for r in rows}),
            by=BY,
            style=style,
            script=script,
        )
    )


def compare_address(runs: Sequence[str], by: str, metric: str | None) -> str:
    """The `view` server's address of the comparison of `runs` by `by` on `metric`."""
    pairs = [("run", r) for r in runs] + [("by", by)] + ([("metric", metric)] if metric else [])
    return "/compare?" + urlencode(pairs)


def compare_html(store: Store, runs: Sequence[str], by: str, metric: str | None) -> str:
    """The `view` server's comparison of the stored `runs` (ids) by `by` on `metric`:
    `compare`'s leaderboard, laid out as the run report lays out its own, from the same
    markdown. CompareError when they cannot be compared."""
    board = compare(store, runs, metric, by)
    style, script = _asset("report.css"), _asset("report.js")
    return (
        _env()
        .get_template("compare.html.j2")
        .render(
            csp=content_policy(style, script),
            runs=[store.run_summary(r) for r in runs],
            by=by,
            metric=board.metric,
            # Another arm on the same runs; the metric stays as asked, not as resolved.
            switch=[(b, compare_address(runs, b, metric)) for b in BY],
            blocks=markdown_blocks(board.to_markdown()),
            style=style,
            script=script,
        )
    )
