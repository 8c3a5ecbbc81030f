"""The roundtable's papers as presets: SoCRATES and ProMediate.

Sources point into each paper (§, Table, Appendix) and, where the paper is silent, into
its released code as our specs of the papers read it.
"""

from __future__ import annotations

from disputelab.protocols.presets import TRACKER, Preset, PresetSetting, register_preset

S = PresetSetting
PROTOCOL = "roundtable"

register_preset(
    Preset(
        "socrates",
        "SoCRATES",
        PROTOCOL,
        (
            S("budget", 100, "§3.2: impasse at a 100-turn budget", "100 party turns"),
            S(
                "turn_counting",
                "party",
                "§3.1, App. G: the mediator's utterance is inserted before the next party "
                "speaks (the paper does not say it uses up the budget)",
                "party turns",
            ),
            S(
                "context",
                0,
                "§3.1 and its visibility matrix: parties and mediator read the dialogue so far",
                "the last 12 turns",
            ),
            S("parties_temperature", 0.6, "§3.2, App. B: parties at temperature 0.6", "0.7"),
            S(
                "mediator_temperature",
                0.6,
                "§3.1, App. G: both mediator steps at temperature 0.6",
                "0.6 to decide and speak, 0 to rate (social)",
            ),
            S(
                "mediator_every_turn",
                True,
                "§3.1: at every party turn the mediator decides whether to intervene",
                "after every party has spoken since its last turn",
            ),
            S(
                "party_memory",
                True,
                "§3.2: each inner thought joins the party's own private history",
                "thoughts are recorded but not fed back",
            ),
            S(
                "culture_statement",
                "described",
                "§3.3, App. D: a deterministic statement of the culture's six Hofstede scores",
                "six bare numbers",
            ),
            S(
                TRACKER,
                "topic-localized",
                "§3.4: the topic-localized judge (applied when the experiment has a judge model)",
                "oracle with rule parties, self-report otherwise",
            ),
        ),
        (
            "SoCRATES's prompt texts are not published (Tables 10, 11, 14-20); disputelab's "
            "own prompts stand in for them.",
        ),
    )
)

register_preset(
    Preset(
        "promediate",
        "ProMediate",
        PROTOCOL,
        (
            S(
                "turn_counting",
                "dialogue",
                "§2.2, code `run_conversation`: mediator interventions use up turns",
                "party turns (the mediator's are free)",
            ),
            S(
                "budget_per_party_topic",
                4,
                "code `num_turns = 4 x N x M` (the paper: proportional to parties and issues)",
                "a fixed budget of 100 party turns",
            ),
            S(
                "stop_on_consensus",
                False,
                "code: the early stop on all issues resolved is commented out",
                "stop when every party signals consensus",
            ),
            S("turn_taking", "motivated", "§2.2: inner-thought turn-taking", "cyclic"),
            S(
                "party_style",
                "general",
                "§4.2: Medium difficulty is General, no conflict-mode persona",
                "each party's strategy, reactivity and culture in its brief",
            ),
            S(
                "context",
                5,
                "code: humans and mediators read the last 5 events",
                "the last 12 turns",
            ),
            S(
                "parties_temperature",
                1.0,
                "code: no temperature is passed, so the provider's default (1.0) applies",
                "0.7",
            ),
            S(
                "mediator_temperature",
                1.0,
                "code: no temperature is passed, so the provider's default (1.0) applies",
                "0.6 to decide and speak, 0 to rate (social)",
            ),
            S(
                "mediator_every_turn",
                True,
                "code: the mediator is consulted after every human utterance",
                "after every party has spoken since its last turn",
            ),
            S(
                "social_when_call",
                True,
                "§4.1, Table 12: the social mediator's separate when-to-intervene call",
                "the social mediator plans at every consultation",
            ),
            S(
                "mediator_consensus_state",
                True,
                "§4.1, Table 13: strategies are planned with the current consensus state",
                "the mediator sees no consensus state",
            ),
            S(
                TRACKER,
                "per-turn",
                "§3.1, Alg. 1: per-utterance attitudes and pairwise agreement "
                "(applied when the experiment has a judge model)",
                "oracle with rule parties, self-report otherwise",
            ),
        ),
        (
            "The consensus state shown to the mediator is read off the parties' stated "
            "stances; ProMediate's code asks a separate model (its online tracker).",
            "General removes the persona from disputelab's prompt; ProMediate's own General "
            "line ('no specific negotiation style') is not copied.",
        ),
    )
)
