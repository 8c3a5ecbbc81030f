"""`disputelab run`: one episode of any protocol, with its unmediated twin where the
protocol plays twins, stored, scored and summarised."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from disputelab.cli.common import (
    fail,
    fail_if_judges_silent,
    fail_scenario,
    library,
    metrics_table,
    open_models,
    out,
    print_undefined,
    print_usage,
    store_option,
    undefined_reasons,
    warn,
)
from disputelab.cli.params import parse_pairs, protocol_params, with_param_options
from disputelab.cli.progress import ticker
from disputelab.cli.run_tracker import (
    TrackerOption,
    chosen_tracker,
    preset_tracker,
    print_tracked,
    track,
)
from disputelab.episode import Episode
from disputelab.protocols.base import (
    DEFAULT_PROTOCOL,
    NONE,
    PROTOCOLS,
    DisputeProtocol,
    ProtocolParams,
    get_protocol,
    mediator_kinds,
    party_kinds,
    retrieval_protocols,
)
from disputelab.registry import UnknownPluginError
from disputelab.scenario.checks import unsettlable
from disputelab.scenario.io import MAX_SEED, ScenarioError, load_scenario
from disputelab.scenario.library import resolve_scenario
from disputelab.scenario.schema import Scenario

if TYPE_CHECKING:
    from disputelab.evaluation.metrics import MetricResult
    from disputelab.experiments.episodes import Cast, RunResult
    from disputelab.llm.models import ModelHub

    Scores = dict[str, dict[str, MetricResult]]  # by episode id, as `evaluate_run` gives

MODEL_HELP = "rule (none), local, openai:MODEL, openai:MODEL@URL or a disputelab.toml profile."


def _seed_in_range(seed: int) -> int:
    # A callback rather than min/max: typer's range column would squeeze the help text.
    if not 0 <= seed <= MAX_SEED:
        raise typer.BadParameter(f"must be from 0 to {MAX_SEED} (2^53), got {seed}")
    return seed


SeedOption = Annotated[
    int, typer.Option(callback=_seed_in_range, help="Random seed (same seed, same episode).")
]


ProtocolOption = Annotated[
    str | None,
    typer.Option(
        help=f"Protocol: {', '.join(PROTOCOLS.names())} (default: the preset's, else "
        f"{DEFAULT_PROTOCOL})."
    ),
]
PresetOption = Annotated[
    str | None,
    typer.Option(
        help="A paper's setting: agentmediation, socrates or promediate (see "
        "`disputelab presets show NAME`); options given explicitly override it."
    ),
]


BehaviourOption = Annotated[
    list[str] | None,
    typer.Option(
        help="A rule-policy behaviour parameter as NAME=VALUE (see `disputelab conditions "
        "parameters`); repeat for more."
    ),
]


WhenModelOption = Annotated[
    str | None,
    typer.Option(
        help="Model for the mediator's when-call (generic, social with --social-when-call); "
        "default: the mediator's. Charged as mediator.when."
    ),
]


@with_param_options
def run(
    scenario: Annotated[str, typer.Argument(help="Built-in scenario id or a scenario file.")],
    mediator: Annotated[
        str | None,
        typer.Option(help=f"Mediator: {', '.join(mediator_kinds())} (default: the protocol's)."),
    ] = None,
    parties: Annotated[
        str | None,
        typer.Option(
            help=f"Party agents: {', '.join(party_kinds())}, as the protocol takes them "
            "(default: rule without a model, llm with one)."
        ),
    ] = None,
    model: Annotated[str, typer.Option(help=f"Model for every LLM role: {MODEL_HELP}")] = "rule",
    parties_model: Annotated[str | None, typer.Option(help="Model for the parties.")] = None,
    mediator_model: Annotated[str | None, typer.Option(help="Model for the mediator.")] = None,
    mediator_when_model: WhenModelOption = None,
    judge_model: Annotated[
        str | None, typer.Option(help="Model for judges (recorded; asked by a judged --tracker).")
    ] = None,
    protocol: ProtocolOption = None,
    preset: PresetOption = None,
    condition: Annotated[
        str, typer.Option(help="Condition(s), joined by ',' (see `disputelab conditions list`).")
    ] = "general",
    seed: SeedOption = 0,
    corpus: Annotated[
        Path | None,
        typer.Option(
            help="Statute corpus for expertise:ek-topK (JSONL or YAML of citation and text); "
            "default: the legal bases of the other cases in the scenario file's folder."
        ),
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(help="A protocol parameter as KEY=VALUE (see `disputelab protocols list`)."),
    ] = None,
    behaviour: BehaviourOption = None,
    tracker: TrackerOption = None,
    **params: Any,
) -> None:
    """Run one episode; with a mediator, also its matched unmediated episode."""
    protocol, params = _with_preset(preset, protocol, params, behaviour)
    proto = _protocol(protocol)
    cast = _cast(proto, mediator, parties, model, parties_model, mediator_model, judge_model)
    cast = _with_when_model(proto, cast, mediator_when_model)
    chosen = protocol_params(proto, params, param or [])
    hub = open_models(cast.models.values())
    _check_corpus(proto, corpus)
    base = _base_scenario(scenario, proto)
    tracked_by = chosen_tracker(tracker, proto, cast, base, preset_tracker(preset, judge_model))
    sc, result, tracked = _play(
        scenario, base, proto, cast, seed, chosen, condition, corpus, hub, model, tracked_by
    )
    _print_result(sc, proto, cast, result)
    print_tracked(tracked, result, tracked_by, _episode_label(proto, cast))
    print_usage(hub)
    out.print(f"[dim]full transcript: disputelab {store_option()}report {result.run_id}[/]")
    fail_if_judges_silent(hub, undefined_reasons(tracked))  # exit 2 after the tables, as evaluate


def _protocol(name: str) -> DisputeProtocol:
    try:
        return get_protocol(name)
    except UnknownPluginError as exc:
        fail(str(exc))


def _check_corpus(proto: DisputeProtocol, corpus: Path | None) -> None:
    if corpus is not None and not proto.uses_retrieval:
        names = " or ".join(retrieval_protocols())
        fail(
            f"--corpus serves the expertise condition of the {names} protocol; "
            f"add --protocol {names}"
        )


def _with_preset(
    name: str | None, protocol: str | None, given: dict[str, Any], behaviour: list[str] | None
) -> tuple[str, dict[str, Any]]:
    """The protocol and parameter options under `--preset`: the preset's values, with
    each option given on the command line in their place; `--behaviour` pairs as the
    `behaviour` parameter."""
    if behaviour:
        given = {**given, "behaviour": parse_pairs(behaviour, "--behaviour")}
    if name is None:
        return protocol or DEFAULT_PROTOCOL, given
    from disputelab.protocols.presets import PRESETS, get_preset, with_preset

    if name not in PRESETS:
        fail(f"unknown preset {name!r}; available: {', '.join(PRESETS.names())}")
    explicit = {k: v for k, v in given.items() if v is not None}
    try:
        chosen, values = with_preset(get_preset(name), protocol, explicit)
    except ValueError as exc:
        fail(str(exc))
    return chosen, {**given, **values}


def _cast(
    proto: DisputeProtocol,
    mediator: str | None,
    parties: str | None,
    model: str,
    parties_model: str | None,
    mediator_model: str | None,
    judge_model: str | None,
) -> Cast:
    """Who plays each seat: kinds from the options or the protocol's defaults."""
    from disputelab.experiments.episodes import Cast

    # --mediator and --mediator-model fill the protocol's one non-party seat, whatever
    # its role is called; every other seat takes --model.
    other = proto.mediator_seat.role if proto.mediator_seat else "mediator"
    # A seat that borrows a role's model (the turn-taking predictor: the parties') takes it.
    models = {s.role: model for s in proto.seats if not s.model_from} | {
        proto.party_seat.role: parties_model or model,
        other: mediator_model or model,
        "judge": judge_model or model,
    }
    kinds: dict[str, str] = {}
    for seat, given in ((proto.mediator_seat, mediator), (proto.party_seat, parties)):
        if seat is None:
            continue
        llm = models.get(seat.role, model) != "rule"
        kind = given or (seat.default_with_model if llm else seat.default)
        known = mediator_kinds() if not seat.per_party else seat.kinds()
        if kind not in known:  # a kind of no protocol: name the ones this seat takes
            what = "party kind" if seat.per_party else seat.role
            takes = ", ".join(seat.kinds())
            fail(f"unknown {what} {kind!r}; the {proto.name} protocol takes {takes}")
        try:
            proto.check_seat(seat.role, kind)
        except UnknownPluginError as exc:
            fail(str(exc))
        if seat.needs_model(kind) and models.get(seat.role) == "rule":
            # Said before the run is recorded. --mediator-model fills the non-party seat
            # whatever its role is called (counsel, ...).
            if seat.per_party:
                fail(f"{kind} parties need a model: pass --model or --parties-model")
            fail(f"{seat.role} {kind!r} needs a model: pass --model or --mediator-model")
        kinds[seat.role] = kind
    return Cast(kinds, models).for_protocol(proto)


def _with_when_model(proto: DisputeProtocol, cast: Cast, when_model: str | None) -> Cast:
    """The cast with the mediator's when-call on a model of its own (`ROLE.when`), for a
    mediator kind that makes one."""
    from disputelab.agents.registry import kind_calls, sub_role
    from disputelab.experiments.episodes import Cast

    seat = proto.mediator_seat
    if when_model is None:
        return cast
    kind = cast.seat_kind(seat) if seat is not None else NONE
    if seat is None or "when" not in kind_calls(seat.interface, kind):
        offering = [k for k in mediator_kinds() if seat and "when" in kind_calls(seat.interface, k)]
        fail(
            f"--mediator-when-model: the {kind} mediator makes no when-call; "
            f"{', '.join(offering) or 'no mediator of this protocol'} does"
        )
    return Cast(cast.kinds, {**cast.models, sub_role(seat.role, "when"): when_model})


def _base_scenario(ref: str, proto: DisputeProtocol) -> Scenario:
    try:
        sc = resolve_scenario(ref, library())
    except ScenarioError as exc:
        fail_scenario(exc)
    # The scenario as written, before a condition gives it what the protocol asks for (an
    # expertise level hands any scenario a legal context): experiments check the same.
    if (problem := proto.scenario_problem(sc)) is not None:
        fail(problem)
    for line in unsettlable(sc):
        warn(sc.id, line)
    return sc


async def _conditioned(
    base: Scenario, condition: str, hub: ModelHub, model: str, params: dict[str, Any]
) -> Scenario:
    """Apply `condition`; LLM-written conditions use `model` when it is not `rule`."""
    from disputelab.authoring.scenario_writer import apply_condition_with_model, needs_writer
    from disputelab.scenario.behaviour import Behaviour

    writer = hub.model(model, "writer") if model != "rule" and needs_writer(condition) else None
    b = Behaviour.of(params.get("behaviour"))
    return await apply_condition_with_model(base, condition, writer, b)


def _check_expertise(proto: DisputeProtocol, sc: Scenario) -> None:
    if sc.legal is not None and sc.legal.retrieval_top_k and not proto.uses_retrieval:
        names = " or ".join(retrieval_protocols())
        fail(
            f"the expertise condition applies to the {names} protocol, whose mediator "
            f"proposes legal bases; add --protocol {names}"
        )


def _retrieve(ref: str, sc: Scenario, corpus: Path | None) -> tuple[str, ...]:
    """Legal bases for the expertise condition, from `corpus`, else from the other cases in
    the scenario file's folder (or the store's library, for an imported id)."""
    from disputelab.legal.expertise import bases_for

    if sc.legal is None or sc.legal.retrieval_top_k == 0:
        return ()
    neighbours: list[Scenario] = []
    folder = Path(ref).parent if Path(ref).is_file() else library()
    if corpus is None:
        for f in sorted(folder.glob("*.y*ml")) + sorted(folder.glob("*.json")):
            try:
                neighbours.append(load_scenario(f))
            except ScenarioError:
                continue  # a stray file beside the cases does not block the run
    # stored-topK reads the case's own list: no BM25 index is built for it.
    return bases_for(corpus, neighbours, sc)


def _play(
    ref: str,
    base: Scenario,
    proto: DisputeProtocol,
    cast: Cast,
    seed: int,
    chosen: ProtocolParams,
    condition: str,
    corpus: Path | None,
    hub: ModelHub,
    model: str,
    tracker: str | None,
) -> tuple[Scenario, RunResult, Scores]:
    """Condition the scenario, play it and read it with `tracker`, in one event loop:
    model clients keep their connections to one loop, so a second `asyncio.run` would find
    them closed."""
    from disputelab.cli.common import open_store
    from disputelab.experiments.episodes import run_single
    from disputelab.llm.base import ModelError
    from disputelab.llm.models import ModelConfigError

    store = open_store()
    # Only what was given: a temperature left unset may come from a model profile.
    params = chosen.model_dump(exclude_unset=True)

    with ticker(f"simulating {base.id}: turns", hub, transient=True) as progress:

        async def condition_and_play() -> tuple[Scenario, RunResult, Scores]:
            try:
                return await play(await _conditioned(base, condition, hub, model, params))
            finally:
                await hub.aclose()  # on this loop, which owns the pooled connections

        async def play(sc: Scenario) -> tuple[Scenario, RunResult, Scores]:
            _check_expertise(proto, sc)
            retrieved = _retrieve(ref, sc, corpus) if proto.uses_retrieval else ()
            result = await run_single(
                store,
                sc,
                cast,
                seed,
                proto.name,
                params,
                condition,
                hub,
                retrieved,
                lambda turn: progress.advance(),
            )
            tracked = await track(store, result, tracker, hub, cast) if tracker else {}
            return sc, result, tracked

        try:
            return asyncio.run(condition_and_play())
        except ScenarioError as exc:
            fail_scenario(exc)
        except (UnknownPluginError, ModelConfigError, ModelError, ValueError) as exc:
            fail(str(exc).splitlines()[0])


def _mediator_kind(proto: DisputeProtocol, cast: Cast) -> str:
    seat = proto.mediator_seat
    return cast.kind(seat.role, seat.default) if seat else NONE


def _episode_label(proto: DisputeProtocol, cast: Cast) -> str:
    """The metrics tables' heading of the episode's column (the twin's is "unmediated")."""
    return "mediated" if _mediator_kind(proto, cast) != NONE else "episode"


def _print_result(sc: Scenario, proto: DisputeProtocol, cast: Cast, result: RunResult) -> None:
    mediator = _mediator_kind(proto, cast)
    names = {p.id: p.name for p in sc.parties} | {"mediator": "Mediator"}
    out.print(
        f"[bold]{escape(sc.title)}[/] ([green]{escape(sc.id)}[/]), run [magenta]{result.run_id}[/]",
        highlight=False,
    )
    if result.baseline is not None:
        print_summary(result.baseline, names, "unmediated")
    print_summary(
        result.episode, names, f"mediator: {mediator}" if mediator != NONE else "unmediated"
    )
    for heading, text in proto.details(result.episode):
        out.print(f"[bold]{escape(heading)}[/]: {escape(text)}", highlight=False)
    columns = {_episode_label(proto, cast): result.scores}
    if result.baseline_scores is not None:
        columns = {"unmediated": result.baseline_scores} | columns
    out.print(metrics_table(proto.report.metrics_title, columns))
    print_undefined({"": result.scores})


def print_summary(ep: Episode, names: dict[str, str], label: str, excerpt: int = 3) -> None:
    """An episode in short: its first and last turns, the stop, and the agreement."""
    outcome = ep.outcome
    assert outcome is not None
    n_med = len(ep.intervention_positions())
    out.print(
        f"[bold]{label}[/]: {ep.party_turns} party turns, {n_med} mediator turns, "
        f"{ep.wall_time_s * 1000:.0f} ms"
    )
    turns = ep.turns
    shown = turns if len(turns) <= 2 * excerpt else turns[:excerpt] + turns[-excerpt:]
    for i, t in enumerate(shown):
        if len(turns) > 2 * excerpt and i == excerpt:
            out.print(f"  [dim]… {len(turns) - 2 * excerpt} more turns …[/]")
        text = t.text if len(t.text) <= 160 else t.text[:157] + "..."
        out.print(
            f"  [cyan]{t.party_turn:>3} {escape(names.get(t.speaker, t.speaker))}:[/] "
            f"{escape(text)}",
            highlight=False,
        )
    out.print(f"  [bold]stop:[/] {outcome.status.value}: {escape(outcome.stop_reason)}")
    if outcome.agreement and any(outcome.agreement.values()):
        agreed = ", ".join(f"{t}={o or '-'}" for t, o in outcome.agreement.items())
        label = "agreement" if outcome.status.value == "resolved" else "common ground"
        out.print(f"  [bold]{label}:[/] {escape(agreed)}", highlight=False)
