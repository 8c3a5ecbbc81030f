"""Turn-taking predictors: who is expected to speak next (motivated turn-taking)."""
