"""Authoring tools: LLM writers that rewrite scenarios for conditions (extra parties,
longer histories, dispute causes). They produce scenarios, not turns, so they are not
agents."""
