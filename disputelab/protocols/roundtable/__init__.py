"""The roundtable protocol (SoCRATES, ProMediate): parties take the floor in turn, a
proactive mediator may step in after any party turn.

Importing this package registers the protocol, its mediator and turn-predictor kinds,
its evaluators and its papers' presets. Its tables are read only when a report is made.
"""

from disputelab.protocols.roundtable import presets
from disputelab.protocols.roundtable.agents import kinds, turn_kinds
from disputelab.protocols.roundtable.evaluation import evaluators
from disputelab.protocols.roundtable.protocol import RoundTable, RoundTableParams

# isort: split
# A person's kind is listed after the agents' kinds of each seat.
from disputelab.protocols.roundtable.agents import human

__all__ = [
    "RoundTable",
    "RoundTableParams",
    "evaluators",
    "human",
    "kinds",
    "presets",
    "turn_kinds",
]
