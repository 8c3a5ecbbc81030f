"""Agents: the interfaces and what each may see (base), the agent-kind registry, parties,
mediators per protocol seat, prompts and the utility maths the rule policy uses."""
