"""The settlement protocol (SettleAgent): bilateral legal settlement over an amount and
clauses, with BATNA analysis, planning counsel, reflection memory, a compliance auditor,
legal aid and a red team.

Importing this package registers the protocol, its counsel, party and mediator kinds and
its evaluator. Its tables are read only when a report is made.

This module is the protocol's face: outside its folder, only the API imports it, for the
counsel's reflection memory kept in a store (`disputelab memory`).
"""

from disputelab.protocols.settlement import evaluation, presets
from disputelab.protocols.settlement.agents.memory import Entry as MemoryEntry
from disputelab.protocols.settlement.agents.memory import MemoryBank, MemoryFile
from disputelab.protocols.settlement.params import SettlementParams
from disputelab.protocols.settlement.protocol import Settlement

# isort: split
# A person's kind is listed after the agents' kinds of each seat.
from disputelab.protocols.settlement.agents import human

__all__ = [
    "MemoryBank",
    "MemoryEntry",
    "MemoryFile",
    "Settlement",
    "SettlementParams",
    "evaluation",
    "human",
    "presets",
]
