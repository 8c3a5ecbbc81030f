"""Party agents: the rule policy with its template voice, and LLM-played parties."""
