"""Mediators that lead the staged protocol's legal mediation: they open, propose points of
contention, legal bases and a package, guide each bargaining round, and close."""
