"""The staged protocol's paper as a preset: AgentMediation's default setting."""

from __future__ import annotations

from disputelab.protocols.presets import Preset, PresetSetting, register_preset

S = PresetSetting

register_preset(
    Preset(
        "agentmediation",
        "AgentMediation",
        "staged",
        (
            S("rounds", 5, "Setup, default setting: 5 bargaining rounds", "5"),
            S(
                "context",
                0,
                "code: the statements, the first option and the whole dialogue history go "
                "into every party and mediator prompt",
                "the last 12 turns",
            ),
            S("parties_temperature", 0.0, "Setup, default setting: temperature 0", "0.7"),
            S("mediator_temperature", 0.0, "Setup, default setting: temperature 0", "0"),
            S(
                "party_style",
                "general",
                "Setup and Table 5's Default row: no behavioural strategy",
                "each party's strategy, reactivity and culture in its brief",
            ),
            S(
                "verdict_calls",
                "two",
                "Tables 18 and 19: acceptance and satisfaction asked separately",
                "one call returns both",
            ),
            S(
                "party_reflection",
                True,
                "code (`Player`): after each turn a party checks its line for objective faults "
                "(up to 3 times) and sums up its negotiation conditions for its next prompt",
                "no check, no conditions note",
            ),
            S(
                "expertise_use",
                "append",
                "code (`run_exp3.sh`, `judge_mediator.py --retrieve --topk k`): Table 7's w/ EK "
                "adds the first k retrieved articles to the cited bases afterwards (the most "
                "likely reading; the paper says retrieval informs the mediator)",
                "the retrieved bases go into the mediator's prompt",
            ),
        ),
        (
            "Judged Con and LR (Tables 20-21): give the experiment a judge model; it then "
            "runs `legal-judges` and the tables use them.",
        ),
    )
)
