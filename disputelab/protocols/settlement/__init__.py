"""The settlement protocol (SettleAgent): bilateral legal settlement over an amount and
clauses, with BATNA analysis, planning counsel, reflection memory, a compliance auditor,
legal aid and a red team.

Importing this package registers the protocol, its counsel, party and mediator kinds and
its evaluator. Its tables are read only when a report is made.
"""

from disputelab.protocols.settlement import evaluation, presets
from disputelab.protocols.settlement.agents.memory import MemoryBank, MemoryFile
from disputelab.protocols.settlement.params import SettlementParams
from disputelab.protocols.settlement.protocol import Settlement

__all__ = ["MemoryBank", "MemoryFile", "Settlement", "SettlementParams", "evaluation", "presets"]
