"""Proactive mediators for the roundtable: they decide after every party turn whether to
step in (rule, and the LLM-driven generic and social mediators)."""
