"""The errors of naming and configuring a model, in a module of their own so that the key
lookup, the provider table and model plug-ins can raise them without importing the hub."""

from __future__ import annotations

from disputelab.errors import DisputelabError


class ModelConfigError(DisputelabError, ValueError):
    """A model name or profile that cannot be used; the message says how to fix it."""


class MissingKeyError(ModelConfigError):
    """A model whose API key is not in the environment (yet)."""


class MissingExtraError(ModelConfigError):
    """A model whose optional package is not installed here (yet): the embedded model
    without the `local` extra (`check_installed`)."""


class EnvFileError(ModelConfigError):
    """A `.env` file that cannot be read as one: its path and line, never its text."""
