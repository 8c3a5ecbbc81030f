"""The staged protocol (AgentMediation): five stages of court-annexed legal mediation,
from the case brief to each party's verdict on the mediator's final proposal.

Importing this package registers the protocol, its mediator kinds, its evaluators and
the paper's preset. Its tables are read only when a report is made.
"""

from disputelab.protocols.staged import presets
from disputelab.protocols.staged.agents import kinds
from disputelab.protocols.staged.evaluation import evaluators
from disputelab.protocols.staged.protocol import Staged, StagedParams

# isort: split
# A person's kind is listed after the agents' kinds of each seat.
from disputelab.protocols.staged.agents import human

__all__ = ["Staged", "StagedParams", "evaluators", "human", "kinds", "presets"]
