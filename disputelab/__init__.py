"""disputelab: simulate dispute mediation and negotiation, run experiments, score outcomes."""

__version__ = "0.1.0"
