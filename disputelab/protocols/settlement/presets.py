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
                "candidates",
                3,
                "§3.3, candidate generation: the counsel samples K candidate actions at the "
                "root; §4.1 reports no K, so 3 is disputelab's choice",
                "3",
            ),
            S(
                "depth",
                2,
                "§3.3: a controlled, shallow adversarial search whose edges alternate between "
                "the parties; no depth is given, so 2 (the candidate and one more own move, "
                "each with the opponent's reply) is disputelab's reading",
                "2",
            ),
            S(
                "simulations",
                8,
                "§3.3, Eqs. 7-9: UCB selection and incremental-mean backup; the number of "
                "simulations is not reported, so 8, the n_iter of the bargaining search in "
                "RoT: Enhancing LLMs with Reflection on Search Trees (Hui and Tu, 2024), is "
                "disputelab's choice",
                "8",
            ),
            S(
                "ucb_c",
                1.0,
                "§3.3, Eq. 9: the exploration constant c > 0 has no reported value; 1.0 suits "
                "values on [0, 1]",
                "1.0",
            ),
            S(
                "walk_away",
                "batna",
                "§3.2-3.3: both counsel bargain around the outside option b_t, and "
                "worse-than-BATNA is judged against it, so it is also where they walk away",
                "the BATNA reservations",
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
            "The paper reports no K, tree depth, simulation count or c (§4.1); the values "
            "above are disputelab's, each marked with where it comes from. Raise them with "
            "--param (e.g. depth=4, simulations=64): anything set explicitly wins.",
            "Table 2 (red-team stress test): add `parties: redteam`, as "
            "examples/settlement-redteam.yaml does; its modes follow App. A.2.",
            "Table 3's ablations (w/o Compliance, Aid, Tree, RoT) are mediator kinds "
            "(mcts-no-auditor, mcts-no-aid, direct, mcts-no-memory), not settings.",
        ),
    )
)
