"""Importers: external case formats into Scenarios."""
