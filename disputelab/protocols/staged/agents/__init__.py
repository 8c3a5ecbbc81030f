"""Mediators that lead the staged protocol's legal mediation: they open, propose points of
contention, legal bases and a package, guide each bargaining round, and close."""

STAGED_MEDIATOR = "staged-mediator"  # the seat interface: leads a staged session
