"""Defaults shared by the endpoint factory and the backend, kept apart from the backend so
that naming a model does not import the `openai` SDK (about a second)."""

DEFAULT_TIMEOUT_S = 60.0  # one HTTP request; a whole call gets three of these by default
