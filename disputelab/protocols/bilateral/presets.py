"""The bilateral protocol's paper as a preset: the socially-aware remediator.

Sources point into "Assistive Large Language Model Agents for Socially-Aware Negotiation
Dialogues" (§, Table, Appendix).
"""

from __future__ import annotations

from disputelab.protocols.presets import Preset, PresetSetting, register_preset

S = PresetSetting

register_preset(
    Preset(
        "remediator",
        "Socially-aware remediator",
        "bilateral",
        (
            S(
                "violation_prob",
                0.4,
                "§4.1 and App. A.1: p_c = 0.4 before each turn of the norm-unaware agent",
                "0.4",
            ),
            S(
                "shots",
                8,
                "§4.1: in all ICL-related methods K is set as 8",
                "8",
            ),
            S(
                "trigger",
                "label",
                "§2.1: remediation points are the annotated violating turns x_t",
                "the labelled violations",
            ),
            S(
                "single_violation",
                False,
                "§4.1, Table 1: violations may occur at any seller turn (about 44% of turns)",
                "any number per dialogue",
            ),
        ),
        (
            "ValueImpact ICL (Table 1's method) uses an exemplar set chosen by value impact: "
            "make one with `disputelab exemplars select --name NAME` and set "
            "`exemplars: NAME`; the preset leaves the exemplars as they are.",
            "The paper's dialogues are in Chinese with GPT-3.5 negotiators (§4.1); the "
            "built-in scenarios are English.",
        ),
    )
)
