"""The planning counsel: K candidates, a tree search `depth` moves deep with UCB over
them against a modelled opponent, rollouts of a few rounds, and the root candidate of
highest value played (equal values settled at random, seeded from the episode seed; each
turn's visits, Q and ties are kept in its thought, see `search_record`). With memory
on, RoT distils each tree into the memory bank and retrieved memories add candidates (a
concession that worked at this stage and gap, the amount share of similar settled cases)
and strike clauses the auditor flagged before.

Offline the candidates come from the same concession curve the direct counsel follows
(its step is always candidate 0), so planning only chooses among moves, never changes the
curve: a difference from `direct` is the look-ahead's. An LLM planner asks its model for
the candidates instead (`llm_counsel.ModelCandidates`).
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, cast

from disputelab.agents.base import PublicTurn, TurnContext
from disputelab.episode import Action, Usage
from disputelab.protocols.settlement.agents.brief import Brief, Reading, read
from disputelab.protocols.settlement.agents.counsel import (
    Counsel,
    Move,
    move_to_action,
    rule_move,
    strategy_eagerness,
    voice,
)
from disputelab.protocols.settlement.agents.mcts import Leaf, Settings, Ties, best_action, search
from disputelab.protocols.settlement.agents.memory import (
    Features,
    MemoryBank,
    RuleDistiller,
    Tree,
    gap_bucket,
    risky,
    stage_of,
)
from disputelab.protocols.settlement.agents.model import Weights, normalised_surplus, sign
from disputelab.protocols.settlement.agents.planning import (
    Candidate,
    NegotiationGame,
    SimState,
    candidates,
    opponent_target,
)
from disputelab.protocols.settlement.agents.search_record import RootStat, SearchRecord
from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR, Behaviour


@dataclass(frozen=True)
class PlanConfig:
    """Search settings; defaults and sources are the protocol's parameters."""

    k: int = 3
    simulations: int = 8
    rollout_rounds: int = 3
    c: float = 1.0
    eps: float = 1e-6
    weights: Weights = field(default_factory=Weights)
    max_model_calls: int = 1
    depth: int = 2
    rollout_model: bool = False  # rollouts ask the model for the other side's offers
    rollout_calls: int = 4  # at most this many such calls per counsel turn

    def search(self) -> Settings:
        return Settings(self.simulations, self.c, self.eps, self.depth)


ModelProposer = Callable[
    [Brief, Sequence[PublicTurn], list[str], int, int, int],
    Awaitable[tuple[list[Move], Usage | None]],
]


class RolloutOpponent(Protocol):
    """The other side in rollouts, played by a model (`llm_counsel.ModelOpponent`)."""

    def start(
        self, brief: Brief, dialogue: Sequence[PublicTurn], turn: int, budget: int
    ) -> None: ...

    async def __call__(self, state: SimState) -> float | None: ...

    def take_usage(self) -> Usage | None: ...


class PlanningCounsel(Counsel):
    """MCTS counsel; `memory` None is the no-memory ablation."""

    def __init__(
        self,
        seed: int,
        config: PlanConfig | None = None,
        memory: MemoryBank | None = None,
        name: str = "mcts",
        proposer: ModelProposer | None = None,
        behaviour: Behaviour = DEFAULT_BEHAVIOUR,
    ) -> None:
        super().__init__(behaviour=behaviour)
        self.seed = seed
        self.config = config or PlanConfig()
        self.memory = memory
        self.name = name
        self.proposer = proposer
        self.eagerness = 1.0
        self.scenario_id = ""
        self.turns_planned = 0
        self.last_plan: list[tuple[str, float, int]] = []  # (candidate, Q, visits)
        self.last_search: SearchRecord | None = None
        self.uses_memory = True
        self.rollout_opponent: RolloutOpponent | None = None  # set for model kinds
        # Who turns a search into memory entries: the memory seat's (templates or a model).
        self.distiller: RuleDistiller = RuleDistiller()
        self._previous = 0.0  # our standing amount at the root of the latest search

    def prepare(
        self, brief: Brief, unit: str = "", strategy: str = "compromising", scenario_id: str = ""
    ) -> None:
        super().prepare(brief, unit)
        self.eagerness = strategy_eagerness(strategy, self.behaviour)
        self.scenario_id = scenario_id

    def configure(self, config: PlanConfig, memory: MemoryBank | None) -> None:
        """The protocol's settings, and the memory bank when this kind keeps memory."""
        self.config = config
        self.memory = memory if self.uses_memory else None

    def _context(self, brief: Brief, reading: Reading) -> tuple[str, str]:
        theirs = (
            reading.theirs[-1]
            if reading.theirs
            else 2 * brief.batna.expected_judgment - brief.target
        )
        mine = reading.own[-1] if reading.own else brief.target
        share = abs(mine - theirs) / max(brief.batna.expected_award, 1.0)
        return stage_of(brief.progress(len(reading.own))), gap_bucket(share)

    def _memory_candidates(
        self, brief: Brief, reading: Reading, base: Move, ctx: tuple[str, str]
    ) -> list[Candidate]:
        if self.memory is None:
            return []
        out: list[Candidate] = []
        suggested = self.memory.suggested_concession(brief.side, *ctx)
        previous = reading.own[-1] if reading.own else brief.target
        if suggested is not None and suggested < 1.0:
            span = abs(brief.target - brief.reservation)
            amount = previous - sign(brief.side) * suggested * span
            out.append(
                Candidate(
                    Move(
                        False,
                        amount,
                        base.options,
                        base.clauses,
                        f"memory: concede {suggested:.0%} of the range",
                    ),
                    "memory-E",
                )
            )
        for card in self.memory.case_cards(
            brief.side, brief.dispute_type, brief.issues, self.scenario_id, 1
        ):
            share = card.payload.get("amount_share")
            if isinstance(share, float):
                amount = share * brief.batna.expected_award
                out.append(
                    Candidate(
                        Move(
                            False,
                            amount,
                            base.options,
                            base.clauses,
                            "memory: similar case settled here",
                        ),
                        "memory-C",
                    )
                )
        return out

    def _safe(self, brief: Brief, cands: list[Candidate]) -> list[Candidate]:
        """Strike remembered risky clauses from every candidate (R rules), and never go
        past the walk-away."""
        avoid = self.memory.avoided_clauses(brief.side) if self.memory is not None else set()
        walk = brief.reservation if self.floor is None else self.floor
        out = []
        for c in cands:
            m = c.move
            amount = (
                m.amount
                if m.accept or (m.amount - walk) * (1 if brief.side == "plaintiff" else -1) >= 0
                else walk
            )
            clauses = tuple(x for x in m.clauses if x not in avoid)
            out.append(replace(c, move=replace(m, amount=amount, clauses=clauses)))
        return out

    async def _root(
        self,
        brief: Brief,
        dialogue: Sequence[PublicTurn],
        reading: Reading,
        ctx: tuple[str, str],
        turn: int,
    ) -> list[Candidate]:
        base = rule_move(brief, reading, self.eagerness, self.floor)
        cands = candidates(brief, reading, self.eagerness, self.floor, self.config.k, base)
        if self.proposer is not None and self.config.max_model_calls > 0:
            memories = (
                self.memory.lines(
                    brief.side, *ctx, brief.dispute_type, brief.issues, self.scenario_id
                )
                if self.memory is not None
                else []
            )
            moves, usage = await self.proposer(
                brief, dialogue, memories, self.config.k, turn, self.config.max_model_calls
            )
            self.report_usage(usage)
            # The model's proposals lead; the curve's step stays as a fallback candidate.
            cands = (
                [Candidate(m, "model") for m in moves]
                + cands[:1]
                + [c for c in cands if c.move.accept]
            )
        cands += self._memory_candidates(brief, reading, base, ctx)
        return self._safe(brief, cands)

    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        brief = self.need_brief()
        reading = read(dialogue, brief)
        context = self._context(brief, reading)
        turn = ctx.party_turn
        self._previous = reading.own[-1] if reading.own else brief.target
        roots = await self._root(brief, dialogue, reading, context, turn)
        game = NegotiationGame(
            brief,
            self.eagerness,
            self.floor,
            roots,
            opponent_target(brief, reading),
            self.config.rollout_rounds,
            self.config.weights,
            0.0,
        )
        game.gap0 = abs((reading.own[-1] if reading.own else brief.target) - game.opp_target) or 1.0
        start = game.start(reading, max(brief.rounds - ctx.party_turn, 1))
        seed = f"{self.seed}/{brief.party_id}/{turn}"
        rng = random.Random(zlib.crc32(seed.encode()))
        # Ties draw from their own generator, so breaking one never shifts the game's chance.
        ties = Ties(random.Random(zlib.crc32(f"{seed}/ties".encode())))
        game.opponent = self._opponent(brief, dialogue, turn)
        root, leaves = await search(game, start, self.config.search(), rng, ties)
        best = cast(int, best_action(root, ties))
        self.last_plan = [
            (roots[cast(int, a)].source, root.edges[a].q, root.edges[a].visits)
            for a in root.actions
        ]
        self.last_search = SearchRecord(
            best,
            tuple(RootStat(s, n, q) for s, q, n in self.last_plan),
            ties.broken,
            self.config.depth,
            self.config.simulations,
            self.config.c,
        )
        self.turns_planned += 1
        if self.memory is not None:
            await self._reflect(brief, roots, leaves, context, game, turn)
        move = roots[best].move
        text = (
            move.plan
            if move.plan and roots[best].source == "model"
            else voice(brief, move, self.unit)
        )
        return move_to_action(brief, move, text, self.last_search.thought())

    def _opponent(
        self, brief: Brief, dialogue: Sequence[PublicTurn], turn: int
    ) -> RolloutOpponent | None:
        """The model that plays the other side in this turn's rollouts, when asked for."""
        if not self.config.rollout_model:
            return None
        if self.rollout_opponent is None:
            raise ValueError(
                f"rollout_model: counsel needs a model counsel; {self.name} has no model "
                "(use an llm- kind, e.g. llm-mcts, with a counsel model)"
            )
        self.rollout_opponent.start(brief, dialogue, turn, self.config.rollout_calls)
        return self.rollout_opponent

    def take_call_usage(self) -> dict[str, Usage]:
        """Usage of calls charged apart from the seat's: the rollouts' (`counsel.rollout`)."""
        used = self.rollout_opponent.take_usage() if self.rollout_opponent else None
        return {"rollout": used} if used is not None else {}

    async def _reflect(
        self,
        brief: Brief,
        roots: list[Candidate],
        leaves: list[Leaf],
        context: tuple[str, str],
        game: NegotiationGame,
        turn: int,
    ) -> None:
        assert self.memory is not None
        tree = Tree(
            [self._features(brief, roots, leaf, game) for leaf in leaves],
            brief.side,
            context,
            self.scenario_id,
            brief.dispute_type,
            brief.issues,
            dict(roots[0].move.options) if roots else {},
            brief.language,
            turn,
        )
        self.memory.add(await self.distiller.reflect(tree))

    def _features(
        self, brief: Brief, roots: list[Candidate], leaf: Leaf, game: NegotiationGame
    ) -> Features:
        final: SimState = leaf.final
        first = roots[cast(int, leaf.first_action)]
        previous = final.my_last if final.my_last is not None else brief.target
        concession = (
            1.0 if first.move.accept else conceded_share(brief, self._previous, first.move.amount)
        )
        agreed = final.agreed
        return Features(
            concession=round(concession, 2),
            settled=agreed is not None,
            amount_share=agreed / brief.batna.expected_award
            if agreed is not None and brief.batna.expected_award
            else None,
            batna_gap=normalised_surplus(
                agreed if agreed is not None else previous, brief.side, brief.batna
            ),
            risky_clauses=risky(final.clauses, agreed if agreed is not None else final.my_last),
            stall=0,
            value=leaf.value,
        )


def conceded_share(brief: Brief, before: float, after: float) -> float:
    """How much of the target-to-walk-away range a move from `before` to `after` gives."""
    span = abs(brief.target - brief.reservation) or 1.0
    return round(sign(brief.side) * (before - after) / span, 2)
