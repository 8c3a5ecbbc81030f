"""The settlement protocol's paper as a preset: SettleAgent's planning-enhanced counsel.

Sources point into "SettleAgent: Planning-Enhanced Multi-Agent Legal Negotiation" (§,
Table, Appendix). Where the paper gives a range or no number, the note says so and the
value is disputelab's reading.
"""

from __future__ import annotations

from disputelab.protocols.presets import Preset, PresetSetting, register_preset

S = PresetSetting

register_preset(
    Preset(
        "settleagent",
        "SettleAgent",
        "settlement",
        (
            S(
                "batna_source",
                "analyst",
                "§3.2, Stage I: the Outcome agent estimates the adjudication outcome and "
                "litigation costs that anchor BATNA",
                "the analyst estimate",
            ),
            S(
                "rollout_rounds",
                3,
                "§3.3, MCTS over negotiation actions: a short-horizon rollout of length L "
                "(e.g., 2-4 rounds); 3 is the middle of that range",
                "3",
            ),
            S(
                "memory",
                "store",
                "§3.3, RoT distillation: branch experience is written back to the counsel's "
                "memory bank to give stable gains across rounds and cases",
                "memory starts empty every episode",
            ),
            S(
                "w_settle",
                0.25,
                "§3.3: m(tau) scalarised over settle, surplus, fairness and compliance; the "
                "paper gives no weights, so they are equal",
                "0.25",
            ),
            S(
                "side",
                "plaintiff",
                "Tables 1-2: the method plays one counsel; App. A.2 (red team) replaces the "
                "other side's lawyer",
                "plaintiff",
            ),
        ),
        (
            "Table 2 (red-team stress test): add `parties: redteam`, as "
            "examples/settlement-redteam.yaml does; its modes follow App. A.2.",
            "Table 3's ablations (w/o Compliance, Aid, Tree, RoT) are mediator kinds "
            "(mcts-no-auditor, mcts-no-aid, direct, mcts-no-memory), not settings.",
        ),
    )
)
