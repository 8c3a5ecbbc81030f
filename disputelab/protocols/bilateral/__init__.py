"""The bilateral protocol (the socially-aware remediator): a buyer and a seller bargain
over one price while a remediator rewrites norm-violating utterances, with in-context
exemplars chosen by value impact (`remediation`).

Importing this package registers the protocol, its bargainer, remediator, moderator and
detector kinds and its evaluator. Its tables are read only when a report is made.
"""

from disputelab.protocols.bilateral import evaluation, presets
from disputelab.protocols.bilateral.protocol import Bilateral, BilateralParams

__all__ = ["Bilateral", "BilateralParams", "evaluation", "presets"]
