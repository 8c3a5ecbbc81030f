"""The bilateral protocol (the remediator paper): a buyer and a seller bargain over one
price, norm violations are injected into the seller's turns, and a remediator may rewrite
a violating utterance before the buyer hears it.

The party listed first opens (the seller states its price; in `salary` HR makes its
offer), the other answers with its opening price, then they alternate. Before each later
seller turn a coin with probability `violation_prob` decides whether the seller is told to
break a norm; the category is drawn from the five of the paper's Table 4. Coin and category
are drawn for every seller turn from a stream of their own, seeded by the task (the
scenario) and the episode seed, so two arms of the same task and seed meet the same
violations at the same turns until their dialogues part, and two tasks do not.

A labelled (or, with `trigger: detector`, detected) violation goes to the remediator, if
one sits; the turn keeps what the seller said and its delivery carries the rewrite to
both parties, so the buyer never hears the original and the seller remembers its words as
rewritten (as in the released simulator). The buyer may walk out; a moderator decides
after every utterance whether the session has ended and with what deal. After
`max_rounds` rounds without an end there is no deal.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from disputelab.agents.base import Agent, PartyAgent, PublicTurn, TurnContext
from disputelab.episode import Action, Episode, Outcome, Signal, Status, Turn
from disputelab.protocols.agent_params import BehaviourOverrides
from disputelab.protocols.base import (
    NONE,
    DisputeProtocol,
    ProtocolParams,
    ReportLayout,
    Seat,
    protocol,
)
from disputelab.protocols.bilateral.agents.kinds import BARGAINER, DETECTOR, MODERATOR, REMEDIATOR
from disputelab.protocols.bilateral.agents.library import BUILTIN, resolve
from disputelab.protocols.bilateral.agents.market import Market
from disputelab.protocols.bilateral.agents.moderator import Call, Detector, Moderator
from disputelab.protocols.bilateral.agents.norms import Category
from disputelab.protocols.bilateral.agents.remediators import METHODS, Remediator
from disputelab.protocols.bilateral.seeding import violation_draws
from disputelab.protocols.session import Session
from disputelab.protocols.view import EpisodeView, TurnView, add_to, default_view
from disputelab.scenario.schema import Scenario

if TYPE_CHECKING:
    from disputelab.store.sqlite import Store

VIOLATION = "violation:"  # stage prefix of a labelled violating turn
DETECTED = "detected:"  # stage prefix of a turn the detector flagged
REMEDIATED = "remediated:"  # stage prefix naming how the rewrite was made


class BilateralParams(ProtocolParams):
    max_rounds: int = Field(default=10, ge=1, le=100, description="Rounds of seller and buyer.")
    violation_prob: float = Field(
        default=0.4, ge=0.0, le=1.0, description="Chance a seller turn is told to break a norm."
    )
    single_violation: bool = Field(
        default=False,
        description="Inject at most one violation per dialogue (value-impact rollouts).",
    )
    exemplars: str = Field(
        default="random",
        max_length=400,
        description="The remediator kind's exemplars: zero-shot, random, retrieval, or a "
        "saved set's name or .json path.",
    )
    shots: int = Field(default=8, ge=0, le=64, description="Exemplars per remediation (k).")
    pool: str = Field(
        default=BUILTIN,
        max_length=400,
        description="Candidate exemplar pool for random and retrieval: builtin, a saved "
        "pool's name or a .json path.",
    )
    trigger: Literal["label", "detector"] = Field(
        default="label",
        description="Remediate labelled violations, or those the violation detector flags.",
    )
    embedding: Literal["semantic", "lexical"] = Field(
        default="semantic",
        description="Retrieval's embedding: the MiniLM model when installed, or lexical.",
    )
    behaviour: BehaviourOverrides = Field(
        default_factory=dict,
        description="Behaviour parameters of the rule bargainers set away from their "
        "defaults, by name (bilateral.*, beta.MODE; `disputelab conditions parameters`; "
        "`run --behaviour NAME=VALUE`).",
    )


def _context(party_turn: int, rounds: int) -> TurnContext:
    """The clock agents concede by: party turns so far out of two per round."""
    return TurnContext(party_turn, 2 * rounds, 2)


@protocol
class Bilateral(DisputeProtocol):
    name = "bilateral"
    summary = "a buyer and a seller bargain over a price; violations, an optional remediator"
    turn_budget = "max_rounds"
    turn_budget_unit = "rounds"
    Params = BilateralParams
    seats = (
        Seat("parties", BARGAINER, per_party=True),
        Seat("mediator", REMEDIATOR, optional=True, default=NONE, default_with_model=NONE),
        Seat("moderator", MODERATOR, default="rule", default_with_model="llm"),
        Seat(
            "detector",
            DETECTOR,
            default="lexicon",
            default_with_model="llm",
            used_when=lambda p: getattr(p, "trigger", "") == "detector",
        ),
    )
    evaluators = ("negotiation-reward",)
    own_behaviour = ("bilateral.",)
    # The worlds table follows the reward and its deal term, each remediator against no
    # remediator (the paper's comparison is between methods, not conditions).
    report: ClassVar[ReportLayout] = ReportLayout(
        "metrics (socially-aware negotiation)",
        effect_metrics=("negotiation-reward:reward", "negotiation-reward:deal"),
        binary_metrics=("negotiation-reward:deal",),
        reference_mediators=("none",),
    )

    def experiment_tables(self, store: Store, run_id: str, config: Mapping[str, Any]) -> str:
        from disputelab.protocols.bilateral.tables import bilateral_markdown

        return bilateral_markdown(store, run_id, dict(config))

    def resource_problems(
        self, params: ProtocolParams, mediators: Sequence[str], store_dir: Path | None
    ) -> list[str]:
        """The saved exemplar set and pool the remediators of `mediators` would load."""
        assert isinstance(params, BilateralParams)
        refs = []
        if "remediator" in mediators and params.exemplars not in METHODS[:3]:
            refs.append(("exemplars", params.exemplars))
        if {"random-icl", "retrieval-icl", "remediator"} & set(mediators):
            refs.append(("pool", params.pool))
        problems = []
        for field, ref in refs:
            try:
                resolve(ref, store_dir)
            except ValueError as exc:
                problems.append(f"{field}: {exc}")
        return problems

    def scenario_problem(self, scenario: Scenario) -> str | None:
        try:
            Market.of(scenario)
        except ValueError as exc:
            return f"the {self.name} protocol cannot play it: {exc}"
        return None

    def max_calls(self, params: ProtocolParams, n_parties: int) -> dict[str, int]:
        assert isinstance(params, BilateralParams)
        turns = 2 * params.max_rounds
        calls = {"parties": turns, "mediator": params.max_rounds, "moderator": turns}
        if params.trigger == "detector":
            calls["detector"] = params.max_rounds
        return calls

    def details(self, episode: Episode) -> list[tuple[str, str]]:
        """Each violation as said and, where remediated, as heard."""
        lines: list[tuple[str, str]] = []
        for t in episode.turns:
            labels = [x for x in t.stage.split() if x.startswith((VIOLATION, DETECTED))]
            if not labels:
                continue
            lines.append((f"party turn {t.party_turn} {' '.join(labels)}", t.text))
            heard = next(iter((t.delivered or {}).values()), None)
            if heard is not None:
                how = next((x for x in t.stage.split() if x.startswith(REMEDIATED)), "")
                lines.append((f"  heard as ({how.removeprefix(REMEDIATED)})", heard))
        return lines

    def episode_view(self, episode: Episode) -> EpisodeView:
        # A turn's labels are notes under it, not a heading over it; the default view
        # already shows what each listener heard instead.
        return default_view(episode, (), _labelled)

    async def play(
        self, session: Session, seated: Mapping[str, Agent | None], params: ProtocolParams
    ) -> Outcome:
        assert isinstance(params, BilateralParams)
        moderator = seated.get("moderator")
        assert isinstance(moderator, Moderator), "the moderator seat is always filled"
        remediator = seated.get("mediator")
        if remediator is not None:
            assert isinstance(remediator, Remediator)
            if not remediator.ready:
                # Saved names resolve in the run's store when it is played into one.
                _prepare(remediator, params, getattr(session, "store_dir", None))
        detector = seated.get("detector")
        assert detector is None or isinstance(detector, Detector)
        return await _Bargaining(session, params, moderator, remediator, detector).play()


def _labelled(turn: Turn, view: TurnView) -> TurnView:
    notes = []
    for label in turn.stage.split():
        kind, _, value = label.partition(":")
        title = {"violation": "norm violation (label)", "detected": "norm violation (detector)"}
        notes.append((title.get(kind, "rewritten by"), value.replace("-", " ")))
    return add_to(replace(view, group=""), notes=notes)


def _prepare(remediator: Remediator, params: BilateralParams, store: Path | None) -> None:
    """Hand the remediator its pool or saved set, as the parameters name them; a kind
    with a method of its own (random-icl, ...) keeps it."""
    named = params.exemplars if params.exemplars in METHODS[:3] else "set"
    method = remediator.fixed or named
    chosen = resolve(params.exemplars, store).exemplars if method == "set" else ()
    pool = resolve(params.pool, store).exemplars if method in ("random", "retrieval") else ()
    remediator.prepare(method, pool, chosen, params.shots, params.embedding == "semantic")


class _Bargaining:
    """One session's alternation of turns."""

    def __init__(
        self,
        session: Session,
        params: BilateralParams,
        moderator: Moderator,
        remediator: Remediator | None,
        detector: Detector | None,
    ) -> None:
        self.s = session
        self.p = params
        self.moderator = moderator
        self.remediator = remediator
        self.detector = detector
        self.market = Market.of(session.scenario)
        self.by_id: dict[str, PartyAgent] = {a.party_id: a for a in session.parties}
        self.order = [p.id for p in session.scenario.parties]
        self.draws = violation_draws(
            session.scenario.id, session.episode.seed, params.violation_prob
        )
        self.violated = False

    def ctx(self) -> TurnContext:
        return _context(self.s.party_turn, self.p.max_rounds)

    def draw(self) -> Category | None:
        """This seller turn's coin and category, drawn whether used or not."""
        category = next(self.draws)
        if category is None or (self.p.single_violation and self.violated):
            return None
        return category

    async def play(self) -> Outcome:
        seller_turns = 0
        for turn in range(2 * self.p.max_rounds):
            speaker = self.order[turn % 2]
            category = None
            if speaker == self.market.seller:
                seller_turns += 1
                drawn = self.draw()
                category = drawn if seller_turns > 1 else None  # the opening is exempt
            action = await self.speak(speaker, category)
            if action.signal is Signal.WALK_AWAY:
                return self.ended(Call(True, False, None, f"{speaker} walked out"))
            if turn == 0 or (turn == 1 and action.signal is Signal.CONTINUE):
                continue  # the opening offer and its answer are scripted in the paper: unmoderated
            call = await self.moderator.judge(self.s.view(self.market.buyer), action, self.ctx())
            self.s.charge("moderator", self.moderator.take_usage())
            if call.ended:
                return self.ended(call)
        return Outcome(Status.BUDGET, f"no deal within {self.p.max_rounds} rounds", amounts={})

    async def speak(self, speaker: str, category: Category | None) -> Action:
        agent = self.by_id[speaker]
        view = self.s.view(speaker)
        t0 = time.perf_counter()
        if category is not None and hasattr(agent, "violate"):
            action: Action = await agent.violate(view, self.ctx(), category)
        else:
            action = await agent.act(view, self.ctx())
        latency = time.perf_counter() - t0
        labels: list[str] = []
        if category is not None and action.tone == "hostile":
            self.violated = True
            labels.append(VIOLATION + category)
        flagged: str | None = category if action.tone == "hostile" else None
        if self.detector is not None and speaker == self.market.seller:
            found = await self.detector.detect(view, action.utterance, self.ctx())
            self.s.charge("detector", self.detector.take_usage())
            labels += [DETECTED + found] if found else []
            flagged = found
        delivered = None
        if flagged is not None and self.remediator is not None:
            rewrite, how = await self.remediate(action, speaker, flagged)
            delivered = {self.market.buyer: rewrite, self.market.seller: rewrite}
            labels.append(REMEDIATED + how)
        self.s.party_spoke(agent, action, latency, " ".join(labels), delivered)
        return action

    async def remediate(self, action: Action, speaker: str, category: str) -> tuple[str, str]:
        """The rewrite of a violating `action` and how it was made; the remediator reads
        the dialogue as the buyer heard it, then the utterance."""
        assert self.remediator is not None
        heard = list(self.s.view(self.market.buyer))
        said = PublicTurn(
            len(self.s.episode.turns), self.s.party_turn + 1, speaker, "party", action.utterance
        )
        rem = await self.remediator.remediate(
            [*heard, said], action.utterance, category, self.ctx()
        )
        self.s.charge("mediator", self.remediator.take_usage())
        return rem.text, rem.how.replace(" ", "-")

    def ended(self, call: Call) -> Outcome:
        if call.deal and call.price is not None:
            return Outcome(
                Status.RESOLVED,
                f"deal at {self.market.money(call.price)} ({call.reason})",
                amounts={self.market.term_id: call.price},
            )
        return Outcome(Status.IMPASSE, f"no deal: {call.reason}")
