"""Presets: a paper's setting in one word (`--preset socrates`, `preset: socrates`).

A preset names the protocol the paper's experiment plays and a value for each setting the
paper fixes, with where in the paper (or its released code) the value comes from and what
disputelab does without the preset. A protocol's package registers its papers' presets in its
`presets` module. Anything a user sets explicitly wins over the preset.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from disputelab.protocols.base import get_protocol
from disputelab.registry import Registry

# Settings a preset may give that are not protocol parameters: the experiment's
# consensus source, applied only when the experiment has a judge model (both trackers
# the papers use are judged).
TRACKER = "tracker"


@dataclass(frozen=True)
class PresetSetting:
    key: str  # a protocol parameter, or `tracker`
    value: Any
    source: str  # where in the paper (or its code) the value comes from
    before: str  # what disputelab does without the preset


@dataclass(frozen=True)
class Preset:
    name: str
    paper: str
    protocol: str
    settings: tuple[PresetSetting, ...]
    notes: tuple[str, ...] = ()  # what the preset cannot reproduce, said plainly

    def params(self) -> dict[str, Any]:
        """The protocol parameters the preset sets."""
        own = get_protocol(self.protocol).Params.model_fields
        return {s.key: s.value for s in self.settings if s.key in own}

    def value(self, key: str) -> Any:
        return next((s.value for s in self.settings if s.key == key), None)


PRESETS: Registry[Preset] = Registry("preset")


def register_preset(preset: Preset) -> Preset:
    return PRESETS.register(preset.name, preset)


def get_preset(name: str) -> Preset:
    return PRESETS.get(name)


def with_preset(
    preset: Preset, protocol: str | None, params: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The protocol and parameters of a run under `preset`: the preset's, with every
    parameter given explicitly in `params` in place of the preset's value. A protocol
    other than the preset's is refused (its parameters would not fit)."""
    if protocol is not None and protocol != preset.protocol:
        raise ValueError(
            f"preset {preset.name} plays the {preset.protocol} protocol, not {protocol}; "
            f"drop the protocol or the preset"
        )
    return preset.protocol, {**preset.params(), **params}


def preset_markdown(preset: Preset) -> str:
    """A preset as a markdown table: setting, value, source in the paper, and before."""
    lines = [
        f"### `{preset.name}`: {preset.paper} (protocol `{preset.protocol}`)",
        "",
        "| setting | value | from the paper | without the preset |",
        "|---|---|---|---|",
    ]
    for s in preset.settings:
        value = str(s.value).lower() if isinstance(s.value, bool) else str(s.value)
        lines.append(f"| `{s.key}` | `{value}` | {s.source} | {s.before} |")
    if preset.notes:
        lines += ["", *(f"- {n}" for n in preset.notes)]
    return "\n".join(lines) + "\n"
