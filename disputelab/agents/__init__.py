"""Agents: interfaces and visibility, rule parties and mediators, voices."""
