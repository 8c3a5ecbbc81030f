"""The `paraphrase` party kind: the rule policy with a voice that talks, not a report."""
