"""Scenario model, file io and the built-in library."""

from disputelab.scenario.io import ScenarioError, dump_scenario, load_scenario, save_scenario
from disputelab.scenario.library import builtin_scenarios, resolve_scenario
from disputelab.scenario.schema import (
    STRATEGIES,
    CultureProfile,
    Fallback,
    LegalContext,
    NumericTerm,
    Option,
    Party,
    Persona,
    Scenario,
    Strategy,
    Topic,
    TopicPreference,
)

__all__ = [
    "STRATEGIES",
    "CultureProfile",
    "Fallback",
    "LegalContext",
    "NumericTerm",
    "Option",
    "Party",
    "Persona",
    "Scenario",
    "ScenarioError",
    "Strategy",
    "Topic",
    "TopicPreference",
    "builtin_scenarios",
    "dump_scenario",
    "load_scenario",
    "resolve_scenario",
    "save_scenario",
]
