"""The settlement protocol (SettleAgent): bilateral settlement bargaining in the shadow of
the law, with a clerk, an outcome analyst (BATNA), planning counsel, a compliance auditor,
legal aid for the weaker side, an optional mediator and a red team.

The scenario's first party is the plaintiff (the payee), its second the defendant; its
first numeric term is the amount bargained over (`reference` holds the known judgment,
hidden from every agent unless `batna_source: judgment`). Clause topics, if any, are
settled alongside the amount. The `counsel` seat holds the method under test and plays
the `side` party; the `parties` seat plays the other side (rule Boulware/Conceder, a
model, or the red team), so every method meets the same opponents.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from disputelab.agents.base import Agent
from disputelab.episode import Episode, Intervention, Outcome, Turn
from disputelab.protocols.base import (
    DisputeProtocol,
    ProtocolParams,
    ReportLayout,
    Seat,
    protocol,
)
from disputelab.protocols.session import Session
from disputelab.protocols.settlement.agents.auditor import RuleAuditor
from disputelab.protocols.settlement.agents.brief import Brief, opponent_of, sides
from disputelab.protocols.settlement.agents.counsel import Counsel, RuleCounsel
from disputelab.protocols.settlement.agents.kinds import (
    SETTLEMENT_AUDITOR,
    SETTLEMENT_COUNSEL,
    SETTLEMENT_MEDIATOR,
    SETTLEMENT_MEMORY,
    SETTLEMENT_OUTCOME,
    SETTLEMENT_PARTY,
)
from disputelab.protocols.settlement.agents.llm_counsel import (
    LLMCounsel,
    ModelOpponent,
    ModelProposer,
)
from disputelab.protocols.settlement.agents.llm_staff import LLMOutcomeAnalyst
from disputelab.protocols.settlement.agents.memory import MemoryBank, MemoryFile, RuleDistiller
from disputelab.protocols.settlement.agents.model import Batna, Side
from disputelab.protocols.settlement.agents.planner import PlanConfig, PlanningCounsel
from disputelab.protocols.settlement.agents.redteam import MODES, RedTeamCounsel
from disputelab.protocols.settlement.agents.search_record import read_record, records
from disputelab.protocols.settlement.agents.staff import (
    AnalystSettings,
    CaseView,
    Clerk,
    LegalAid,
    OutcomeAnalyst,
    RuleMediator,
    judgment_of,
    openings,
    text,
    vulnerable_side,
)
from disputelab.protocols.settlement.flow import Bargaining, Table
from disputelab.protocols.settlement.params import SettlementParams
from disputelab.protocols.view import EpisodeView, TurnView, add_to, default_view
from disputelab.scenario.schema import NumericTerm, Scenario

if TYPE_CHECKING:
    from disputelab.store.sqlite import Store


def amount_term(scenario: Scenario) -> NumericTerm:
    if not scenario.terms:
        raise ValueError(
            f"the settlement protocol needs a numeric amount term; {scenario.id} has none"
        )
    return scenario.terms[0]


def make_brief(
    scenario: Scenario,
    pid: str,
    side: Side,
    ids: Mapping[str, Side],
    term: NumericTerm,
    batna: Batna,
    p: SettlementParams,
    vulnerable: Side | None,
) -> Brief:
    party = scenario.party(pid)
    legal = scenario.legal
    return Brief(
        side=side,
        party_id=pid,
        opponent_id=opponent_of(side, ids),
        term_id=term.id,
        target=term.targets[pid],
        reservation=walk_away(term, pid, side, batna, p.walk_away),
        batna=batna,
        rounds=p.round_limit,
        opens=p.opener == side,
        language=scenario.language,
        vulnerable=vulnerable,
        dispute_type=legal.dispute_type if legal else scenario.domain,
        issues=tuple(legal.points_of_contention) if legal else (),
        rankings={t: tuple(pref.ranking) for t, pref in party.preferences.items()},
        labels={f"{t.id}/{o.id}": o.label for t in scenario.topics for o in t.options},
    )


def walk_away(term: NumericTerm, pid: str, side: Side, batna: Batna, source: str) -> float:
    """Where a counsel stops conceding. `batna`: its side's BATNA reservation, the model
    the analyst states and the metrics judge by, so every signed amount lies in the ZOPA.
    `scenario`: the scenario's own walk-away (the BATNA's where it gives none)."""
    if source == "scenario":
        return term.reservations.get(pid, batna.reservation(side))
    return batna.reservation(side)


@protocol
class Settlement(DisputeProtocol):
    """PREP (clerk, BATNA), BARG (alternating offers), VERIFY (audit, sign)."""

    name = "settlement"
    summary = "bilateral legal settlement: BATNA, planning counsel, compliance audit, red team"
    turn_budget = "round_limit"
    turn_budget_unit = "counsel turns"
    Params = SettlementParams
    heard_as = MappingProxyType({"mediator": "mediator"})  # the mediator's seat hears as one
    seats = (
        Seat("parties", SETTLEMENT_PARTY, per_party=True, default="rule", default_with_model="llm"),
        Seat(
            "counsel",
            SETTLEMENT_COUNSEL,
            optional=True,
            default="mcts",
            default_with_model="llm-mcts",
        ),
        Seat(
            "mediator",
            SETTLEMENT_MEDIATOR,
            optional=True,
            default="rule",
            default_with_model="llm",
        ),
        # The neutral staff: rule kinds offline, model kinds where their role has a model
        # (`--model M`, or `models: {outcome: M}` for that role alone).
        Seat("outcome", SETTLEMENT_OUTCOME, default="rule", default_with_model="llm"),
        Seat("auditor", SETTLEMENT_AUDITOR, default="rule", default_with_model="llm"),
        Seat("memory", SETTLEMENT_MEMORY, default="rule", default_with_model="llm"),
    )
    evaluators = ("settleagent",)
    own_behaviour = ("settlement.",)
    # The worlds table follows the planning comparison's metrics, each method against
    # the direct counsel (the "Planning against direct counsel" table's contrast).
    report: ClassVar[ReportLayout] = ReportLayout(
        "metrics (SettleAgent)",
        effect_metrics=("settleagent:success", "settleagent:surplus", "settleagent:sr_acc20"),
        binary_metrics=("settleagent:success",),
        reference_mediators=("direct", "llm-direct"),
    )

    async def play(
        self, session: Session, seated: Mapping[str, Agent | None], params: ProtocolParams
    ) -> Outcome:
        assert isinstance(params, SettlementParams)
        table, bank = await self._prep(session, seated, params)
        try:
            return await Bargaining(table).play()
        finally:
            if bank is not None and params.memory == "store":
                bank.flush()

    def experiment_tables(self, store: Store, run_id: str, config: Mapping[str, Any]) -> str:
        from disputelab.protocols.settlement.tables import settlement_markdown

        return settlement_markdown(store, run_id, dict(config))

    async def _prep(
        self, session: Session, seated: Mapping[str, Agent | None], p: SettlementParams
    ) -> tuple[Table, MemoryBank | None]:
        sc = session.scenario
        ids = sides(sc)
        term = amount_term(sc)
        by_side: dict[str, str] = {side: pid for pid, side in ids.items()}
        clerk = Clerk()
        digest = clerk.digest(sc)
        session.seat_spoke(
            "clerk",
            clerk,
            Intervention(digest, {**by_side, "tested": p.side}),
            0.0,
            "prep",
            speaker="clerk",
            turn_role="system",
        )
        case = _case(sc, term, ids, digest, p)
        batna, batna_text = await self._analyst(session, seated, case, p)
        counsel = self._counsel(session, seated, p, ids)
        vulnerable = vulnerable_side(sc, ids)
        bank = self._memory(session, p)
        for side, agent in counsel.items():
            brief = make_brief(sc, by_side[side], side, ids, term, batna, p, vulnerable)
            self._seat(agent, brief, sc, term.unit, batna_text, p, bank, clerk)
        tested = counsel[p.tested()]
        distiller = seated.get("memory")
        if isinstance(tested, PlanningCounsel) and isinstance(distiller, RuleDistiller):
            tested.distiller = distiller
        mediator = seated.get("mediator")
        if isinstance(mediator, RuleMediator):
            move = mediator.init_issues([t.name for t in sc.topics], sc.language)
            session.seat_spoke("mediator", mediator, move, 0.0, "prep")
        aid = LegalAid() if tested.uses_aid and vulnerable is not None else None
        if aid is not None:
            said = Intervention(text(sc.language)["brief_aid"])
            session.seat_spoke("legal-aid", aid, said, 0.0, "prep", speaker="legal-aid")
        reviewer = seated.get("auditor")
        table = Table(
            session,
            counsel,
            p.tested(),
            batna,
            term.id,
            term.unit,
            p.round_limit,
            p.first(),
            p.stall_turns,
            tested.uses_auditor,
            aid,
            mediator if isinstance(mediator, RuleMediator) else None,
            vulnerable,
            reviewer=reviewer if isinstance(reviewer, RuleAuditor) else RuleAuditor(),
            memory=tested.distiller if isinstance(tested, PlanningCounsel) else None,
        )
        return table, bank if isinstance(tested, PlanningCounsel) else None

    async def _analyst(
        self,
        session: Session,
        seated: Mapping[str, Agent | None],
        case: CaseView,
        p: SettlementParams,
    ) -> tuple[Batna, str]:
        """The outcome analyst's BATNA at PREP, and what it told the table. A caller that
        seats no analyst gets the seat's default, the rule analyst."""
        seat = seated.get("outcome")
        analyst = seat if isinstance(seat, OutcomeAnalyst) else OutcomeAnalyst()
        settings = AnalystSettings(p.award_share, p.p_win, p.cost_share)
        batna = await analyst.estimate(case, settings)
        said = analyst.report(batna, case.language, case.unit)
        fields = {**_batna_fields(batna), "walk_away": p.walk_away}
        note = _walk_away_note(said.thought, amount_term(session.scenario), p.walk_away)
        if isinstance(analyst, LLMOutcomeAnalyst) and analyst.reasoning:
            note += f"; the model's reasoning: {analyst.reasoning}"
        session.seat_spoke(
            "outcome",
            analyst,
            Intervention(said.utterance, fields, note),
            0.0,
            "prep",
            speaker="outcome",
            turn_role="system",
        )
        return batna, said.utterance

    def _counsel(
        self,
        session: Session,
        seated: Mapping[str, Agent | None],
        p: SettlementParams,
        ids: Mapping[str, Side],
    ) -> dict[Side, Counsel]:
        out: dict[Side, Counsel] = {}
        for agent in session.parties:
            if not isinstance(agent, Counsel):
                raise TypeError(
                    f"party {agent.party_id} is not a settlement counsel; use a "
                    "settlement party kind"
                )
            out[ids[agent.party_id]] = agent
        method = seated.get("counsel")
        if isinstance(method, Counsel):
            replaced = out[p.tested()]
            if replaced.name == "human":  # a person would be seated and never asked
                raise ValueError(
                    f"party {replaced.party_id} is a person's seat, and the counsel seat "
                    f"plays the {p.tested()} side; leave counsel empty (none), or seat the "
                    "person at counsel"
                )
            method.party_id = replaced.party_id
            out[p.tested()] = method
        return out

    def _memory(self, session: Session, p: SettlementParams) -> MemoryBank:
        root = getattr(session, "store_dir", None)
        if p.memory == "store" and root is not None:
            store = MemoryFile(root)
            return MemoryBank(store.load(), store)
        return MemoryBank()

    def _seat(
        self,
        agent: Counsel,
        brief: Brief,
        sc: Scenario,
        unit: str,
        batna_text: str,
        p: SettlementParams,
        bank: MemoryBank,
        clerk: Clerk,
    ) -> None:
        from dataclasses import replace

        brief = replace(brief, text=clerk.role_brief(sc, brief, unit))
        strategy = sc.party(brief.party_id).persona.strategy
        if isinstance(agent, PlanningCounsel):
            if p.rollout_model == "counsel" and agent.rollout_opponent is None:
                raise ValueError(
                    f"rollout_model: counsel asks the counsel's model in rollouts, and "
                    f"{agent.name} plays without one; seat an llm- kind (llm-mcts) with a "
                    "counsel model, or leave rollout_model off"
                )
            agent.prepare(brief, unit, strategy, sc.id)
            config = PlanConfig(
                p.candidates,
                p.simulations,
                p.rollout_rounds,
                p.ucb_c,
                p.ucb_eps,
                p.weights(),
                p.max_model_calls,
                p.depth,
                p.rollout_model == "counsel",
                p.rollout_calls,
            )
            agent.configure(config, bank)
            if isinstance(agent.proposer, ModelProposer):
                agent.proposer.batna_text = batna_text
            if isinstance(agent.rollout_opponent, ModelOpponent):
                agent.rollout_opponent.batna_text = batna_text
        elif isinstance(agent, RuleCounsel):
            agent.prepare(brief, unit, strategy)
        else:
            agent.prepare(brief, unit)
        if isinstance(agent, LLMCounsel):
            agent.batna_text = batna_text
        if isinstance(agent, RedTeamCounsel):
            agent.modes = tuple(m for m in MODES if m in p.modes())
            agent.state.levels = dict.fromkeys(MODES, p.level())

    def scenario_problem(self, scenario: Scenario) -> str | None:
        """A settlement needs a legal claim, two parties and an amount term; topics are
        optional. Without a legal context the trial it weighs against (the expected award,
        the costs) would be invented: a salary or a sale is bargained, not litigated."""
        if scenario.legal is None:
            return (
                f"the {self.name} protocol settles a legal claim against the prospect of trial "
                f"and scenario {scenario.id} has no legal context; bargain over its amount "
                "under the bilateral protocol"
            )
        if len(scenario.parties) != 2:
            return (
                f"the {self.name} protocol needs exactly two parties (plaintiff, defendant); "
                f"scenario {scenario.id} has {len(scenario.parties)}"
            )
        if not scenario.terms:
            return (
                f"the {self.name} protocol bargains over an amount and scenario "
                f"{scenario.id} has no numeric term"
            )
        missing = [p.id for p in scenario.parties if p.id not in scenario.terms[0].targets]
        if missing:
            return (
                f"scenario {scenario.id}: term {scenario.terms[0].id} gives no target for "
                f"{', '.join(missing)}; the {self.name} protocol needs each side's opening "
                "amount (the claim and the admitted amount)"
            )
        return None

    def max_calls(self, params: ProtocolParams, n_parties: int) -> dict[str, int]:
        assert isinstance(params, SettlementParams)
        own = (params.round_limit + 1) // 2
        rollouts = params.rollout_calls if params.rollout_model == "counsel" else 0
        return {
            "parties": own,
            "counsel": own * (max(params.max_model_calls, 1) + rollouts),
            "outcome": 1,
            # A counsel turn makes at most one draft, audited at most twice (a warning's
            # revisions are audited again).
            "auditor": 2 * params.round_limit,
            "mediator": params.round_limit // params.stall_turns,
            "memory": own,  # one distillation per planning turn
        }

    def episode_view(self, episode: Episode) -> EpisodeView:
        """The default view, with each planning turn's search under it."""
        return default_view(episode, self.details(episode), _search_note)

    def details(self, episode: Episode) -> list[tuple[str, str]]:
        lines: list[tuple[str, str]] = []
        for t in episode.turns:
            if t.speaker == "outcome" and t.intervention is not None:
                b = t.intervention.proposal
                lines.append(
                    (
                        "BATNA",
                        f"J {float(b['expected_award']):,.0f}, p_win {b['p_win']}, "
                        f"ZOPA [{float(b['reservation_plaintiff']):,.0f}, "
                        f"{float(b['reservation_defendant']):,.0f}] ({b['source']}); "
                        f"walk-aways: {b.get('walk_away', 'scenario')}",
                    )
                )
            if t.speaker == "auditor":
                lines.append(("audit", t.text.splitlines()[0]))
                verdicts = t.intervention.proposal.get("verdicts") if t.intervention else None
                if verdicts:
                    lines.append(("audit verdicts", verdicts))
            if t.speaker == "mediator" and t.intervention is not None and t.intervention.offer:
                (figure,) = t.intervention.offer.values()
                lines.append(("mediator proposal", f"{figure:,.0f}: {t.text}"))
        lines += [
            (f"search at counsel turn {turn} ({speaker})", r.line())
            for turn, speaker, r in records(episode)
        ]
        if episode.outcome is not None and episode.outcome.amounts:
            lines.append(
                (
                    "settled amount",
                    ", ".join(f"{k}={v:,.2f}" for k, v in episode.outcome.amounts.items()),
                )
            )
        return lines


def _search_note(turn: Turn, view: TurnView) -> TurnView:
    record = read_record(turn.action.thought) if turn.action is not None else None
    return add_to(view, notes=[("tree search", record.line())]) if record is not None else view


def _walk_away_note(thought: str, term: NumericTerm, source: str) -> str:
    """The analyst's private note, saying whose walk-aways the counsel keep: the scenario's
    own are set aside under `walk_away: batna`, and that is marked, not silent."""
    if source == "scenario" or not term.reservations:
        return f"{thought}; walk-aways: {source}"
    own = ", ".join(f"{pid} {v:,.0f}" for pid, v in term.reservations.items())
    return (
        f"{thought}; walk-aways: the BATNA reservations; the scenario's own ({own}) are "
        "not used (walk_away: batna)"
    )


def _batna_fields(b: Batna) -> dict[str, str]:
    """The BATNA as the outcome turn records it, for the evaluator and the report."""
    return {
        "expected_award": repr(b.expected_award),
        "p_win": repr(b.p_win),
        "cost_plaintiff": repr(b.cost_plaintiff),
        "cost_defendant": repr(b.cost_defendant),
        "reservation_plaintiff": repr(b.reservation("plaintiff")),
        "reservation_defendant": repr(b.reservation("defendant")),
        "source": b.source,
    }


def _case(
    sc: Scenario, term: NumericTerm, ids: Mapping[str, Side], digest: str, p: SettlementParams
) -> CaseView:
    """The outcome analyst's view: the digest, the facts, the public openings, and the
    known judgment only under `batna_source: judgment`."""
    judgment = judgment_of(term) if p.batna_source == "judgment" else None
    claim, admitted = (0.0, 0.0) if judgment is not None else openings(term, dict(ids))
    facts = tuple(f.content for f in sc.legal.facts) if sc.legal is not None else ()
    return CaseView(sc.language, term.unit, digest, facts, claim, admitted, judgment)
