"""Global sensitivity analysis: which behaviour parameters move which metrics, with SALib.

A design (Morris elementary effects, or Sobol' indices on a Saltelli sample) picks points
in the space of the chosen behaviour parameters, each between its bounds (the table's
`low` and `high`, or ones given as NAME=LOW:HIGH). Each point is the spec's whole grid
played with those behaviour values and the spec's own seeds, so every point meets the
same scenarios, conditions and seeds (common random numbers: the comparison between
points is paired). A point's output is, per metric, the mean of that metric over the
grid's complete episodes.

Each point's grid is stored as an experiment of its own, named by a digest of the spec it
runs (`NAME.sensitivity.DIGEST`). That makes the store the record of finished work: an
interrupted analysis resumes where it stopped (a finished point is read back, a half-run
one continues episode by episode under the runner's own resume), two designs that share a
point share its grid, and a point whose spec changed in any way gets a new grid rather
than being mixed with the old one.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import warnings
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import ValidationError
from SALib.analyze import morris as morris_analyze
from SALib.analyze import sobol as sobol_analyze
from SALib.sample import morris as morris_sample
from SALib.sample import sobol as sobol_sample

from disputelab.errors import DisputelabError
from disputelab.evaluation.averaging import averaged_value
from disputelab.experiments.resume import check_resume
from disputelab.experiments.runner import Progress, run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_spec
from disputelab.plan.spec import ExperimentSpec, grid_episodes, resolve_scenarios
from disputelab.protocols.base import NONE, behaviour_rows, get_protocol
from disputelab.scenario.behaviour import (
    PARAMETERS,
    BehaviourError,
    check_in_domain,
    check_overrides,
)
from disputelab.scenario.conditions import condition_parameters
from disputelab.store.sqlite import Store

MORRIS, SOBOL = "morris", "sobol"
METHODS = (MORRIS, SOBOL)
DEFAULT_SAMPLES = {MORRIS: 4, SOBOL: 8}  # trajectories; base sample (a power of 2)
MAX_SAMPLES = 4096
NUM_LEVELS = 4  # Morris grid levels (SALib's default)
CONF_LEVEL = 0.95
RESAMPLES = 1000  # bootstrap resamples behind the confidence intervals
# The columns of one parameter's row, in table order, and the one that ranks.
COLUMNS = {
    MORRIS: ("mu_star", "mu_star_conf", "sigma", "mu"),
    SOBOL: ("S1", "S1_conf", "ST", "ST_conf"),
}
RANKED_BY = {MORRIS: "mu_star", SOBOL: "ST"}

Output = tuple[str, str]  # (mediator, "evaluator:metric")
Means = dict[Output, float]
Array = npt.NDArray[np.float64]


class SensitivityError(DisputelabError, ValueError):
    """A design that cannot run; the message is one line."""


@dataclass(frozen=True)
class Factor:
    """A behaviour parameter and the range the design samples it over."""

    name: str
    low: float
    high: float


def parse_factor(text: str) -> Factor:
    """`NAME` (the table's range) or `NAME=LOW:HIGH`."""
    name, sep, bounds = (x.strip() for x in text.partition("="))
    try:
        known = PARAMETERS.get(name)
        # An unknown name is refused, with hints; a known one checked at its default.
        check_overrides({name: known.default if known else 0.0})
    except BehaviourError as exc:
        raise SensitivityError(str(exc)) from None
    if not sep:
        return Factor(name, PARAMETERS[name].low, PARAMETERS[name].high)
    low_text, colon, high_text = bounds.partition(":")
    try:
        if not colon:
            raise ValueError
        low, high = float(low_text), float(high_text)
    except ValueError:
        raise SensitivityError(
            f"{name}: bounds must be LOW:HIGH (two numbers, e.g. {name}=0.2:4), not {bounds!r}"
        ) from None
    if not (math.isfinite(low) and math.isfinite(high)):
        raise SensitivityError(f"{name}: bounds must be finite numbers, not {bounds!r}")
    if low >= high:
        raise SensitivityError(f"{name}: the low bound {low:g} must be below the high {high:g}")
    try:
        check_in_domain(name, low)
        check_in_domain(name, high)
    except BehaviourError as exc:
        raise SensitivityError(str(exc)) from None
    return Factor(name, low, high)


def parse_factors(texts: list[str]) -> list[Factor]:
    found = [parse_factor(t) for t in texts]
    names = [f.name for f in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SensitivityError(f"parameter {', '.join(twice)} given more than once")
    return found


def problem(factors: list[Factor]) -> dict[str, Any]:
    """SALib's description of the parameter space."""
    return {
        "num_vars": len(factors),
        "names": [f.name for f in factors],
        "bounds": [[f.low, f.high] for f in factors],
    }


def check_protocol(spec: ExperimentSpec) -> None:
    if "behaviour" not in get_protocol(spec.protocol).Params.model_fields:
        raise SensitivityError(
            f"the {spec.protocol} protocol's agents have no behaviour parameters to vary"
        )


def default_parameters(spec: ExperimentSpec) -> tuple[str, ...]:
    """The parameters the spec's conditions act through, in table order."""
    moved = (condition_parameters(c) for c in spec.conditions)
    names = {n for c in moved for n in behaviour_rows(spec.protocol, c)}
    return tuple(n for n in PARAMETERS if n in names)


@dataclass(frozen=True)
class Design:
    """The points a method evaluates: one row of `X` per point, one column per factor."""

    method: str
    factors: list[Factor]
    samples: int  # Morris trajectories, or Sobol's base sample
    seed: int
    X: Array

    @property
    def problem(self) -> dict[str, Any]:
        return problem(self.factors)


def make_design(factors: list[Factor], method: str, samples: int, seed: int) -> Design:
    if method not in METHODS:
        raise SensitivityError(f"unknown method {method!r}; use {' or '.join(METHODS)}")
    if not factors:
        raise SensitivityError("no parameter to vary")
    if not 1 <= samples <= MAX_SAMPLES:
        raise SensitivityError(f"samples must be between 1 and {MAX_SAMPLES}, not {samples}")
    if method == SOBOL and samples & (samples - 1):
        raise SensitivityError(
            f"sobol needs a power of 2 for samples (Sobol' sequences converge only "
            f"then): {1 << (samples - 1).bit_length()} rather than {samples}, say"
        )
    if method == MORRIS:
        X = morris_sample.sample(problem(factors), samples, num_levels=NUM_LEVELS, seed=seed)
    else:
        X = sobol_sample.sample(problem(factors), samples, calc_second_order=False, seed=seed)
    return Design(method, factors, samples, seed, np.asarray(X, dtype=float))


def point_values(design: Design, i: int) -> dict[str, float]:
    return {f.name: float(x) for f, x in zip(design.factors, design.X[i], strict=True)}


def point_spec(spec: ExperimentSpec, values: dict[str, float]) -> ExperimentSpec:
    """`spec` with these behaviour values, named by a digest of everything that decides
    its episodes (so equal points share a grid, and a changed spec gets a new one)."""
    data: dict[str, Any] = spec.model_dump()
    params = dict(data["params"])
    params["behaviour"] = {**params.get("behaviour", {}), **values}
    data.update(params=params, ablate=[], ablation_of=None, ablated=None)
    decides = {k: v for k, v in data.items() if k not in ("name", "concurrency")}
    text = json.dumps(decides, sort_keys=True, default=str)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    try:
        return ExperimentSpec.model_validate({**data, "name": f"{spec.name}.sensitivity.{digest}"})
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise SensitivityError(f"{'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def point_parent(name: str) -> str:
    """The spec's name a point's grid (NAME.sensitivity.DIGEST) was made for."""
    return name.rpartition(".sensitivity.")[0]


def point_specs(spec: ExperimentSpec, design: Design) -> list[ExperimentSpec]:
    return [point_spec(spec, point_values(design, i)) for i in range(len(design.X))]


def grid_size(spec: ExperimentSpec, spec_dir: Path, library_dir: Path | None) -> int:
    """Episodes in one point's grid (the behaviour values do not change the grid)."""
    return len(grid_episodes(spec, list(resolve_scenarios(spec, spec_dir, library_dir))))


def stored_points(store: Store, specs: list[ExperimentSpec]) -> list[str]:
    """The points' grids already in the store, each once."""
    runs = {r["run_id"] for r in store.runs()}
    return [n for n in dict.fromkeys(s.name for s in specs) if n in runs]


def finished(store: Store, run_id: str, size: int) -> bool:
    """Whether every episode of a point's grid is complete and scored."""
    complete = store.complete_episode_ids(run_id)
    return len(complete) == size and complete <= set(store.run_scores(run_id))


def point_means(store: Store, run_id: str) -> Means:
    """Per mediator and metric, the mean over the grid's complete episodes (NaN where no
    episode defines it), counting the episodes the report's tables count."""
    scores = store.run_scores(run_id)
    values: dict[Output, list[float]] = defaultdict(list)
    for eid in sorted(store.complete_episode_ids(run_id)):
        mediator = eid.rsplit("/", 4)[3]
        for s in scores.get(eid, []):
            values[(mediator, f"{s.evaluator}:{s.metric}")].append(averaged_value(s)[0])
    out: Means = {}
    for key, xs in values.items():
        defined = [x for x in xs if not math.isnan(x)]
        out[key] = math.fsum(defined) / len(defined) if defined else math.nan
    return out


@dataclass
class Hooks:
    """What the caller hears while points run: each episode (as the runner reports it),
    the episodes of a point skipped whole because it was finished before, and each point
    once its means are known."""

    episode: Progress | None = None
    skipped: Callable[[int], None] | None = None
    point: Callable[[str, Means], None] | None = None


@dataclass
class Evaluation:
    """The outputs of every point evaluated so far (None where not yet)."""

    means: list[Means | None]
    distinct: int
    run: int = 0  # points run (or continued) here
    reused: int = 0  # points finished before and read back
    failed: int = 0  # episodes that failed; a point's means skip them
    interrupted: bool = False
    runs: dict[str, Means] = field(default_factory=dict)


async def evaluate_points(
    store: Store,
    specs: list[ExperimentSpec],
    spec_dir: Path,
    hub: ModelHub,
    size: int,
    hooks: Hooks | None = None,
    stop: threading.Event | None = None,
) -> Evaluation:
    """Play each distinct point's grid (continuing one left half-run, reading back one
    finished before) and take its means; stop between episodes when `stop` is set."""
    hooks = hooks or Hooks()
    names = list(dict.fromkeys(s.name for s in specs))
    result = Evaluation([None] * len(specs), len(names))
    by_name = {s.name: s for s in specs}
    library = Path(store.root) / "library"
    for name in names:
        if stop is not None and stop.is_set():
            result.interrupted = True
            break
        if finished(store, name, size):
            # Reused only if it was played as it would be now (a model profile's
            # temperature, say, may have changed since): otherwise one line, as a resume.
            check_resume(store, plan_spec(by_name[name], spec_dir, library, hub.profiles), True)
            result.reused += 1
            if hooks.skipped is not None:
                hooks.skipped(size)
        else:
            resume = name in {r["run_id"] for r in store.runs()}
            grid = plan_spec(by_name[name], spec_dir, library, hub.profiles)
            grid = replace(grid, parent=point_parent(name))  # listed under its spec's
            summary = await run_experiment(
                store, grid, hub, resume, progress=hooks.episode, stop=stop
            )
            result.failed += summary.failed
            if summary.interrupted:
                result.interrupted = True
                break
            result.run += 1
        result.runs[name] = point_means(store, name)
        if hooks.point is not None:
            hooks.point(name, result.runs[name])
    result.means = [result.runs.get(s.name) for s in specs]
    return result


def outputs(means: list[Means], wanted: tuple[str, ...] = ()) -> dict[Output, Array]:
    """One vector of point means per (mediator, metric), for the metrics `wanted` (every
    metric when none is named; in the order named), the mediated arms before the
    unmediated twins; NaN where a point has no value."""
    found = {k for m in means for k in m if not wanted or k[1] in wanted}
    keys = sorted(
        found, key=lambda k: (wanted.index(k[1]) if wanted else 0, k[0] == NONE, k[0], k[1])
    )
    return {k: np.array([m.get(k, math.nan) for m in means], dtype=float) for k in keys}


def unknown_metrics(wanted: tuple[str, ...], found: Means) -> list[str]:
    names = {metric for _, metric in found}
    return [w for w in wanted if w not in names]


@dataclass(frozen=True)
class Ranking:
    """One output's parameters, most influential first; `note` says why a ranking is
    missing or degenerate."""

    output: Output
    rows: list[tuple[str, dict[str, float]]]  # (parameter, column -> value)
    note: str = ""
    constant: bool = False


MIN_TRAJECTORIES = 2
"""Fewest complete Morris trajectories ranked: with one, mu* has no spread to bootstrap."""


def rank(design: Design, y: Array, output: Output) -> Ranking:
    """SALib's indices for one output, parameters ranked by mu* (Morris) or ST (Sobol).

    Morris trajectories are independent draws, so one that passes through an undefined
    point is left out and the rest are analysed, with a note that counts it; a Sobol
    estimate needs every point of its sample, so one undefined point leaves it unranked.
    """
    undefined = int(np.isnan(y).sum())
    note = ""
    if undefined:
        why = f"undefined at {undefined} of {len(y)} points ({_why_undefined(output)})"
        if design.method != MORRIS:
            return Ranking(output, [], why)
        total = design.samples
        design, y = complete_trajectories(design, y)
        if design.samples < MIN_TRAJECTORIES:
            return Ranking(output, [], why)
        note = f"{total - design.samples} of {total} trajectories left out, {why}"
    return _ranked(design, y, output, note)


def _why_undefined(output: Output) -> str:
    # As in the report's tables, a consensus gain that fell back to a raw change is left
    # out of a mean as well as an undefined one.
    if output[1].endswith(":consensus_gain"):
        return (
            "no episode of their grids has a normalised gain: it was undefined, or the "
            "twin was already at full consensus"
        )
    return "no episode of their grids defines it"


def complete_trajectories(design: Design, y: Array) -> tuple[Design, Array]:
    """A Morris design and its values less the trajectories with an undefined point (a
    trajectory is `factors + 1` consecutive rows of the design)."""
    per = len(design.factors) + 1
    keep = ~np.isnan(y.reshape(design.samples, per)).any(axis=1)
    rows = np.repeat(keep, per)
    return replace(design, samples=int(keep.sum()), X=design.X[rows]), y[rows]


def _ranked(design: Design, y: Array, output: Output, note: str) -> Ranking:
    constant = bool(np.all(y == y[0]))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        found = _analyse(design, y)
    rows = [
        (f.name, {c: _number(found[c][i]) for c in COLUMNS[design.method]})
        for i, f in enumerate(design.factors)
    ]
    key = RANKED_BY[design.method]
    rows.sort(key=lambda r: -r[1][key] if not math.isnan(r[1][key]) else math.inf)
    notes = [note, "the same at every point: no parameter moves it" if constant else ""]
    if design.method == SOBOL and not constant:
        notes.append(first_order_above_total(rows))
    return Ranking(output, rows, "; ".join(n for n in notes if n), constant)


def first_order_above_total(rows: list[tuple[str, dict[str, float]]]) -> str:
    """A warning for the parameters whose estimated S1 exceeds their ST, which the true
    indices never do (a parameter's share alone is part of its share in all): the
    design is too small for those estimates, most of all where the gap exceeds both
    intervals combined."""
    above = []
    for name, v in rows:
        gap = v["S1"] - v["ST"]
        if gap > 1e-9:
            beyond = gap > math.hypot(v["S1_conf"], v["ST_conf"])
            above.append(
                f"{name} ({v['S1']:.3g} > {v['ST']:.3g}{', beyond the CIs' if beyond else ''})"
            )
    if not above:
        return ""
    return (
        "S1 above ST, which exact indices never are, so estimator noise at this sample "
        f"size; raise --samples: {', '.join(above)}"
    )


def _analyse(design: Design, y: Array) -> dict[str, Any]:
    if design.method == MORRIS:
        found: dict[str, Any] = morris_analyze.analyze(
            design.problem,
            design.X,
            y,
            num_resamples=RESAMPLES,
            conf_level=CONF_LEVEL,
            num_levels=NUM_LEVELS,
            seed=design.seed,
        )
        return found
    result: dict[str, Any] = sobol_analyze.analyze(
        design.problem,
        y,
        calc_second_order=False,
        num_resamples=RESAMPLES,
        conf_level=CONF_LEVEL,
        # SALib's Sobol analysis reads a seed of 0 as none (`if seed:`) and bootstraps from
        # the global generator, so the default seed gave new intervals on every run;
        # shifted by one, every seed fixes them.
        seed=design.seed + 1,
    )
    return result


def _number(value: Any) -> float:
    """A float from SALib's (possibly masked) array element; NaN for a masked one."""
    if np.ma.is_masked(value):
        return math.nan
    return float(value)


def rankings(design: Design, ys: dict[Output, Array]) -> list[Ranking]:
    return [rank(design, y, key) for key, y in ys.items()]
