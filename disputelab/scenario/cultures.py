"""Hofstede culture profiles that scenarios and conditions can name by country code."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

import yaml

from disputelab.scenario.schema import CultureProfile

DIMENSIONS = (
    "power_distance",
    "individualism",
    "masculinity",
    "uncertainty_avoidance",
    "long_term_orientation",
    "indulgence",
)


@lru_cache(maxsize=1)
def hofstede() -> dict[str, CultureProfile]:
    """US, CN and KR Hofstede profiles from the cited data file."""
    text = resources.files("disputelab.scenario").joinpath("data/hofstede.yaml").read_text()
    out = {}
    for code, d in yaml.safe_load(text).items():
        out[code] = CultureProfile(
            name=d["name"],
            power_distance=d["pdi"],
            individualism=d["idv"],
            masculinity=d["mas"],
            uncertainty_avoidance=d["uai"],
            long_term_orientation=d["lto"],
            indulgence=d["ivr"],
        )
    return out
