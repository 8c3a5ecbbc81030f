"""One episode runner for every protocol: plan an episode, play it through a session,
commit its turns as it goes (together, at least once a second), score it with its
protocol's evaluators.

`disputelab run` and experiments both come through here: `play_episode` plays one
planned episode, and `run_single` plays a mediated episode with its unmediated twin
(when the protocol plays twins) and scores them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from disputelab.agents.base import Agent, Hears, PartyAgent
from disputelab.agents.memos import AgentMemos
from disputelab.agents.registry import build_agent, build_parties, sub_role
from disputelab.agents.settings import AgentSettings
from disputelab.episode import Episode, Outcome, Status, Turn, Usage
from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.registry import EpisodeToScore, ScoringContext, get_evaluator
from disputelab.humans.source import Withdrawn
from disputelab.llm.base import ChatModel, ModelError
from disputelab.llm.cache import CACHE_NAME
from disputelab.llm.embedding import Embedder, Embeds
from disputelab.llm.embedding_reply import EmbeddingsUnsupported
from disputelab.llm.models import ModelHub
from disputelab.llm.wrappers import Prices
from disputelab.plan.cast import IN_PROCESS, LEXICAL, RULE, Cast, embeddings_model
from disputelab.plan.profiles import profile_temperatures
from disputelab.plan.run import episode_names
from disputelab.protocols.agent_params import agent_settings
from disputelab.protocols.base import (
    DEFAULT_PROTOCOL,
    NONE,
    DisputeProtocol,
    ProtocolParams,
    Seat,
    get_protocol,
)
from disputelab.protocols.session import Session
from disputelab.scenario.conditions import draw_strategy_party
from disputelab.scenario.io import scenario_to_data
from disputelab.scenario.schema import Scenario
from disputelab.store.leases import Leases
from disputelab.store.sqlite import Store, compact_json

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class EpisodePlan:
    """Everything that decides one episode, and where it goes in the store."""

    episode_id: str
    scenario: Scenario
    protocol: str
    params: ProtocolParams
    cast: Cast
    seed: int
    condition: str = "general"
    arm: str = ""
    matched_episode_id: str | None = None
    retrieved: tuple[str, ...] = ()
    # The scenario as the store keeps it (`compact_json` of its data), when the caller
    # has it already: a grid's cell shares one, and encoding it for every episode was a
    # fortieth of a rule episode's CPU.
    scenario_json: str = ""


def _model(hub: ModelHub, cast: Cast, role: str, needs: bool) -> ChatModel | None:
    spec = cast.model(role)
    return hub.model(spec, role) if needs and spec != RULE else None


def _call_models(
    hub: ModelHub, cast: Cast, seat: Seat, kind: str, model: ChatModel | None
) -> dict[str, ChatModel]:
    """Models of the seat's calls that have one of their own, each metered under its
    sub-role (so cost per role shows it); none when the seat plays without a model."""
    if model is None:
        return {}
    return {
        call: hub.model(spec, sub_role(seat.role, call))
        for call, spec in cast.call_models(seat, kind).items()
    }


def party_embedder(plan: EpisodePlan, hub: ModelHub) -> Embeds | None:
    """What ranks the parties' memories (None where they rank none by embeddings): the
    in-process model or lexical vectors when named so, else the endpoint named."""
    name = embeddings_model(get_protocol(plan.protocol), plan.params, plan.cast)
    if name is None:
        return None
    if name in (IN_PROCESS, LEXICAL):
        return Embedder(semantic=name == IN_PROCESS)
    return hub.embedder(name)


# What the start of a run embeds to learn whether the endpoint embeds at all; cached like
# any text, so a re-run asks nothing.
PROBE = "Does this endpoint serve embeddings?"


async def check_embeddings(hub: ModelHub, names: Sequence[str | None]) -> None:
    """Raise `EmbeddingsUnsupported` before a run is recorded when an endpoint among
    `names` (the run's `embeddings_model`s) serves no embeddings, rather than failing
    every episode with it. Other failures are left to the episodes, as for chat calls."""
    for name in dict.fromkeys(names):
        if name is None or name in (IN_PROCESS, LEXICAL):
            continue
        try:
            await hub.embedder(name).embed([PROBE])
        except EmbeddingsUnsupported:
            raise
        except ModelError:
            continue


def seat_agents(
    plan: EpisodePlan,
    hub: ModelHub,
    memos: AgentMemos | None = None,
    hosts: Mapping[str, object] | None = None,
) -> tuple[list[PartyAgent], dict[str, Agent | None]]:
    """The party agents and the agent in every other seat (None where left empty), all
    sharing `memos`: the run's, or fresh ones for an episode played on its own. `hosts`
    hold what hosts a person's seat, by seat key, for the kinds a person fills."""
    protocol = get_protocol(plan.protocol)
    parties: list[PartyAgent] = []
    seated: dict[str, Agent | None] = {}
    settings = agent_settings(plan.params)
    memos = memos if memos is not None else AgentMemos()
    for seat in protocol.seats:
        kind = plan.cast.seat_kind(seat)
        protocol.check_seat(seat.role, kind)
        if kind == NONE or not seat.used(plan.params):
            seated[seat.role] = None
            continue
        model = _model(hub, plan.cast, seat.role, seat.takes_model(kind))
        if seat.per_party:
            parties = _party_agents(plan, hub, protocol, seat, kind, model, settings, memos, hosts)
        else:
            seated[seat.role] = build_agent(
                seat.interface,
                kind,
                plan.scenario,
                plan.seed,
                model,
                plan.retrieved,
                seat.role,
                settings,
                _call_models(hub, plan.cast, seat, kind, model),
                memos,
                hosts,
            )
    return parties, seated


def _party_agents(
    plan: EpisodePlan,
    hub: ModelHub,
    protocol: DisputeProtocol,
    seat: Seat,
    kind: str,
    model: ChatModel | None,
    settings: AgentSettings,
    memos: AgentMemos,
    hosts: Mapping[str, object] | None,
) -> list[PartyAgent]:
    """One agent per party: the seat's kind, and for a party cast apart from it
    (`parties:tenant: human`) that party's kind, each in the scenario's order."""
    embedder = party_embedder(plan, hub)

    def build(kind: str, model: ChatModel | None) -> dict[str, PartyAgent]:
        agents = build_parties(
            plan.scenario,
            kind,
            plan.seed,
            model,
            seat.interface,
            settings,
            memos,
            embedder,
            seat.role,
            hosts,
        )
        return {a.party_id: a for a in agents}

    by_id = build(kind, model)
    for pid, own in plan.cast.party_kinds(seat).items():
        protocol.check_seat(seat.role, own)
        own_model = _model(hub, plan.cast, seat.role, seat.takes_model(own))
        built = build(own, own_model)
        if pid not in built:
            raise ValueError(f"the {own} kind seated no agent for party {pid}")
        by_id[pid] = built[pid]
    missing = [p.id for p in plan.scenario.parties if p.id not in by_id]
    if missing:
        raise ValueError(f"the {kind} kind seated no agent for {', '.join(missing)}")
    return [by_id[p.id] for p in plan.scenario.parties]


COMMIT_ENV = "DISPUTELAB_COMMIT_EVERY_S"


def commit_interval() -> float:
    """Seconds of finished turns a kill may cost: DISPUTELAB_COMMIT_EVERY_S, default 1;
    0 commits every turn on its own (the old behaviour, half the speed of rule grids)."""
    raw = os.environ.get(COMMIT_ENV, "1")
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 3600:
        raise ValueError(f"{COMMIT_ENV} must be a number of seconds from 0 to 3600, not {raw!r}")
    return value


class TurnCommits:
    """An episode's writes go to the store in groups, not one transaction each: an
    episode that takes under a second is written whole, start to end, in one transaction,
    and a long (LLM) one at least once a second. A kill can therefore lose at most a second
    of finished turns, of an episode that `--resume` replays from its start in any case
    (an episode killed before its first group is simply not in the store yet)."""

    def __init__(
        self,
        store: Store,
        episode_id: str,
        start: Callable[[], None],
        every_s: float | None = None,
    ) -> None:
        self.store = store
        self.episode_id = episode_id
        self.start: Callable[[], None] | None = start  # registers the episode: first group
        self.every_s = commit_interval() if every_s is None else every_s
        self.pending: list[Turn] = []
        self.last = time.monotonic()

    def add(self, turn: Turn) -> None:
        self.pending.append(turn)
        if time.monotonic() - self.last >= self.every_s:
            self.commit()

    def commit(self, *then: Callable[[], None]) -> None:
        """Write what is pending, and then the `then` writes, in one transaction. If it
        rolls back, the start and the turns stay pending for the next commit."""
        with self.store.batch():
            if self.start is not None:
                self.start()
            self.store.append_turns(self.episode_id, self.pending)
            for write in then:
                write()
        self.start = None
        self.pending.clear()
        self.last = time.monotonic()


def _priced_usage(
    episode: Episode, plan: EpisodePlan, hub: ModelHub
) -> dict[str, tuple[str, Usage, Prices]]:
    return {
        role: (plan.cast.model(role), usage, hub.price(plan.cast.model(role)))
        for role, usage in episode.usage.items()
    }


def scenario_json(scenario: Scenario) -> str:
    """A scenario as the store keeps it."""
    return compact_json(scenario_to_data(scenario))


def listening(
    session: Session, protocol: DisputeProtocol, seated: Mapping[str, Agent | None]
) -> None:
    """Tell each seated person (a seat that `Hears`) its view as turns happen: a party's
    seat is told by the session itself, other seats under the protocol's `heard_as`."""
    for role, listener in protocol.heard_as.items():
        agent = seated.get(role)
        if isinstance(agent, Hears):
            session.listen(listener, agent)


async def play_episode(
    store: Store,
    hub: ModelHub,
    run_id: str,
    plan: EpisodePlan,
    on_turn: Callable[[Turn], None] | None = None,
    memos: AgentMemos | None = None,
    hosts: Mapping[str, object] | None = None,
) -> Episode:
    """Play and commit one planned episode, turn by turn (each also handed to `on_turn`).
    Its agents share `memos` with the other episodes of the run (fresh ones if None).
    `hosts` host a person's seats (by seat key); with any, each turn commits at once."""
    protocol = get_protocol(plan.protocol)
    drawn = draw_strategy_party(plan.scenario, plan.seed)
    if drawn is not plan.scenario:  # the party a one-party strategy went to, by the seed
        plan = replace(plan, scenario=drawn, scenario_json="")
    problem = protocol.scenario_problem(plan.scenario)
    if problem is not None:
        raise ValueError(problem)
    plan = replace(plan, cast=plan.cast.for_protocol(protocol))
    agents = plan.cast.describe(protocol, plan.params)
    episode = Episode(plan.scenario.id, protocol.name, plan.seed, agents, plan.condition)

    def start() -> None:
        store.start_episode(
            plan.episode_id,
            run_id,
            episode,
            plan.scenario_json or scenario_json(plan.scenario),
            plan.arm,
            plan.matched_episode_id,
        )

    commits = TurnCommits(store, plan.episode_id, start, 0.0 if hosts else None)

    def sink(turn: Turn) -> None:
        commits.add(turn)
        if on_turn is not None:
            on_turn(turn)

    try:  # an agent that cannot be seated fails the episode on the record too
        parties, seated = seat_agents(plan, hub, memos, hosts)
        session = Session(plan.scenario, parties, episode, sink, protocol.keeps_silent_stances)
        session.store_dir = None if store.root is None else Path(store.root)  # a Ray actor's
        listening(session, protocol, seated)
        session.finish(await _played(protocol, session, seated, plan.params))
        usage = _priced_usage(episode, plan, hub)
        hub.flush()  # its replies reach the cache file before it is finished
        # One transaction: the last turns, the usage and the end land together, so a
        # resume never sees an episode complete without its usage.
        commits.commit(
            lambda: store.record_usage(plan.episode_id, usage),
            lambda: store.finish_episode(plan.episode_id, episode),
        )
    except BaseException as exc:  # a stop request too: its finished turns are kept
        reason = f"{type(exc).__name__}: {exc}"
        failed = [lambda: store.fail_episode(plan.episode_id, reason)]
        commits.commit(*(failed if isinstance(exc, Exception) else []))
        raise
    return episode


async def _played(
    protocol: DisputeProtocol, session: Session, seated: Any, params: ProtocolParams
) -> Outcome:
    """The protocol's outcome; where a person withdraws from the study, the episode
    stops there, its turns kept, as withdrawn (not as a party walking away)."""
    try:
        return await protocol.play(session, seated, params)
    except Withdrawn as left:
        return Outcome(
            Status.WITHDRAWN,
            f"withdrawn: participant {left.participant} left after party turn {session.party_turn}",
        )


@dataclass(frozen=True)
class ExtraScoring:
    """An experiment's extra evaluators that score each episode as it finishes, with the
    options and judge name a pass of `disputelab evaluate` would store them under."""

    evaluators: tuple[str, ...]
    options: Mapping[str, str]
    judge_name: str = ""


async def score_protocol(
    store: Store,
    episode_id: str,
    item: EpisodeToScore,
    protocol: DisputeProtocol,
    ctx: ScoringContext | None = None,
    extras: ExtraScoring | None = None,
) -> dict[str, MetricResult]:
    """Score a complete episode with its protocol's own evaluators (and `extras`), store
    the scores, and return the protocol's."""
    ctx = ctx or ScoringContext()
    out: dict[str, MetricResult] = {}
    scored: list[tuple[str, str, dict[str, MetricResult], str]] = []
    for name in protocol.evaluators:
        ev = get_evaluator(name)
        scores = await ev.score(item, ctx)
        scored.append((ev.stored_name(ctx.options), ev.version, scores, ""))
        out.update(scores)
    try:
        if extras is not None:
            extra_ctx = ScoringContext(options=extras.options)  # its memo lives one episode
            for name in extras.evaluators:
                ev = get_evaluator(name)
                scores = await ev.score(item, extra_ctx)
                judge = extras.judge_name
                scored.append((ev.stored_name(extras.options), ev.version, scores, judge))
    finally:  # an extra evaluator's failure does not cost the scores made before it
        with store.batch():  # one commit (scoring may await; writing does not)
            for name, version, scores, judge in scored:
                store.add_scores(episode_id, name, version, scores, judge)
    return out


@dataclass
class RunResult:
    """A stored, scored run: the episode, its unmediated twin when one was played, the
    protocol's scores of each, and the second table's tracker scores where there is one."""

    run_id: str
    episode: Episode
    episode_id: str
    baseline: Episode | None
    baseline_id: str | None
    scores: dict[str, MetricResult]
    baseline_scores: dict[str, MetricResult] | None = None
    hub: ModelHub | None = field(default=None, repr=False)
    scenario: Scenario | None = field(default=None, repr=False)  # as played (conditioned)
    tracker: str | None = None  # the consensus source of `tracked`
    tracked: dict[str, dict[str, MetricResult]] = field(default_factory=dict, repr=False)
    label: str = "mediated"  # the episode's column: "episode" where no mediator sat
    # On a model axis (several models), each backbone's result, by name; the fields
    # above are then the first backbone's. Empty for a run of one model.
    by_model: dict[str, RunResult] = field(default_factory=dict, repr=False)

    def columns(self) -> dict[str, dict[str, MetricResult]]:
        """The protocol's scores by arm: `unmediated` (the twin) first, then `mediated`,
        or `episode` where no mediator sat; on a model axis, each backbone's as
        `ARM@MODEL` (a twin they all share as `unmediated`)."""
        out: dict[str, dict[str, MetricResult]] = {}
        if self.by_model:
            for name, part in self.by_model.items():
                for arm, scores in part.columns().items():
                    shared = arm == "unmediated" and "@" not in (part.baseline_id or "@")
                    out[arm if shared else f"{arm}@{name}"] = scores
            return out
        if self.baseline_scores is not None:
            out["unmediated"] = self.baseline_scores
        out[self.label] = self.scores
        return out

    def metrics(self) -> pd.DataFrame:
        """The protocol's metrics as a frame: one row per metric, one column per arm;
        an undefined score is NaN (its reason stays in `scores`)."""
        import pandas as pd

        columns = self.columns()
        names = list(dict.fromkeys(m for scores in columns.values() for m in scores))
        data = {arm: [s[m].value if m in s else None for m in names] for arm, s in columns.items()}
        return pd.DataFrame(data, index=pd.Index(names, name="metric"), dtype=float)


def record_run(
    store: Store,
    scenario: Scenario,
    proto: DisputeProtocol,
    params: ProtocolParams,
    cast: Cast,
    seed: int,
    condition: str,
    retrieved: tuple[str, ...],
    backbones: Mapping[str, Cast],
    kind: str = "run",
    extra: Mapping[str, Any] | None = None,
) -> str:
    """Record a single run with its label and configuration (its model axis, where it
    has one, as an experiment's config names it); `kind` is the run's kind (`run`, or
    `play` for a run with a person at a seat) and `extra` more of its configuration."""
    seat = proto.mediator_seat
    mediator = cast.kind(seat.role, seat.default) if seat else NONE
    # The default protocol's runs keep the shorter label and config they always had.
    named = {} if proto.name == DEFAULT_PROTOCOL else {"protocol": proto.name}
    borrowed = {s.role for s in proto.seats if s.model_from}  # follow their source seat
    axis = {
        name: {r: m for r, m in c.models.items() if cast.models.get(r) != m and r not in borrowed}
        for name, c in backbones.items()
    }
    return store.create_run(
        kind,
        label="/".join([scenario.id, *named.values(), mediator]) + f"/seed{seed}",
        config={
            "scenario": scenario.id,
            **named,
            **cast.describe(proto, params),
            **({"backbones": axis} if axis else {}),
            "seed": seed,
            **params.model_dump(),
            "condition": condition,
            **({"retrieved": list(retrieved)} if proto.uses_retrieval else {}),
            **(extra or {}),
        },
    )


async def played_and_scored(
    store: Store,
    hub: ModelHub,
    run_id: str,
    plan: EpisodePlan,
    proto: DisputeProtocol,
    on_turn: Callable[[Turn], None] | None,
    memos: AgentMemos,
    baseline: Episode | None = None,
    hosts: Mapping[str, object] | None = None,
) -> tuple[Episode, dict[str, MetricResult]]:
    """Play and commit one planned episode of a run, then score it (against `baseline`,
    its twin, when it has one). It is claimed while it plays, so that `runs` shows the
    run as running. `hosts` host a person's seats."""
    leases = Leases(store.db)
    leases.claim(plan.episode_id)
    try:
        episode = await play_episode(store, hub, run_id, plan, on_turn, memos, hosts)
    finally:
        leases.release_all()
    item = EpisodeToScore(episode, plan.scenario, baseline)
    return episode, await score_protocol(store, plan.episode_id, item, proto)


async def run_single(
    store: Store,
    scenario: Scenario,
    cast: Cast | None = None,
    seed: int = 0,
    protocol: str = DEFAULT_PROTOCOL,
    params: ProtocolParams | Mapping[str, Any] | None = None,
    condition: str = "general",
    hub: ModelHub | None = None,
    retrieved: Sequence[str] = (),
    on_turn: Callable[[Turn], None] | None = None,
    backbones: Mapping[str, Cast] | None = None,
    shared_twin: bool = True,
) -> RunResult:
    """One stored, scored run: the episode, and first its unmediated twin when the
    protocol plays twins and a mediator sits. With `backbones` (name -> cast), the
    episode is played once with each, on the same scenario and seed, its twin shared by
    them all when `shared_twin` (they differ in the mediator's models only) and played
    with each otherwise; the result holds each backbone's in `by_model`."""
    proto = get_protocol(protocol)
    if (problem := proto.scenario_problem(scenario)) is not None:
        raise ValueError(problem)  # before a run is recorded
    retrieved = tuple(retrieved)
    cast = (cast or Cast()).for_protocol(proto)
    casts = {name: c.for_protocol(proto) for name, c in (backbones or {}).items()}
    p = params if isinstance(params, ProtocolParams) else proto.params(params)
    hub = hub or ModelHub(Path(store.root) / CACHE_NAME)
    p = profile_temperatures(p, cast, hub.profiles)  # before the config is recorded
    seat = proto.mediator_seat
    mediator = cast.kind(seat.role, seat.default) if seat else NONE
    twin = proto.plays_twin and seat is not None and mediator != NONE
    run_id = record_run(store, scenario, proto, p, cast, seed, condition, retrieved, casts)
    names = episode_names(mediator, twin, list(casts), shared_twin)
    store.set_plan(run_id, len(names))

    def plan(name: str, backbone: str, matched: str | None) -> EpisodePlan:
        c = casts.get(backbone, cast)
        arm = "unmediated" if name.split("@")[0] == "unmediated" else "mediated"
        c = c.with_kind(seat.role, NONE) if seat is not None and arm == "unmediated" else c
        eid = f"{run_id}-{name}"
        return EpisodePlan(
            eid, scenario, proto.name, p, c, seed, condition, arm, matched, retrieved
        )

    memos = AgentMemos()  # the run's: its twins and its mediated episodes share them
    played: dict[str, tuple[Episode, dict[str, MetricResult]]] = {}
    twins: dict[str, str] = {}  # backbone -> the id of the twin its episode is scored against
    for name, backbone in names:
        is_twin = twin and name.split("@")[0] == "unmediated"
        matched = None if is_twin else twins.get(backbone, twins.get(""))
        ep_plan = plan(name, backbone, matched)
        base = played[matched][0] if matched is not None else None
        played[ep_plan.episode_id] = await played_and_scored(
            store, hub, run_id, ep_plan, proto, on_turn, memos, base
        )
        if is_twin:
            twins[backbone] = ep_plan.episode_id
    hub.flush()  # a judge's replies too, though the caller may never close the hub
    return _result(run_id, names, played, twins, mediator != NONE, hub)


def _result(
    run_id: str,
    names: Sequence[tuple[str, str]],
    played: Mapping[str, tuple[Episode, dict[str, MetricResult]]],
    twins: Mapping[str, str],
    mediated: bool,
    hub: ModelHub,
) -> RunResult:
    """The run's result: its episode and twin; on a model axis, the first backbone's, with
    each backbone's in `by_model`."""
    by_model: dict[str, RunResult] = {}
    for name, backbone in names:
        eid = f"{run_id}-{name}"
        if eid in twins.values():  # each backbone's result holds it as its baseline
            continue
        base_id = twins.get(backbone, twins.get(""))
        episode, scores = played[eid]
        baseline, baseline_scores = played[base_id] if base_id is not None else (None, None)
        by_model[backbone] = RunResult(
            run_id,
            episode,
            eid,
            baseline,
            base_id,
            scores,
            baseline_scores,
            hub,
            label="mediated" if mediated else "episode",
        )
    first = next(iter(by_model.values()))
    if len(by_model) > 1 or "" not in by_model:
        first = replace(first, by_model=by_model)
    return first
