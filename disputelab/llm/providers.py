"""`provider/model` names, as other tools write them, resolved through one table.

Each entry says where the provider's OpenAI-compatible endpoint is and which environment
variable holds its key; adding a provider is adding a row. `PROVIDER/MODEL@URL` calls
`URL` instead (a proxy, a gateway, a server of one's own): the provider's key is still
sent when set, but no longer required. `vllm/` has no endpoint of its own, so it needs
the URL. The model is everything after the first `/`, so `openrouter/meta-llama/x` asks
OpenRouter for `meta-llama/x`.

The endpoints are those each provider documents for the OpenAI SDK:

- OpenAI: https://api.openai.com/v1
- Anthropic, "OpenAI SDK compatibility": https://api.anthropic.com/v1/
- Gemini, "OpenAI compatibility": https://generativelanguage.googleapis.com/v1beta/openai/
- OpenRouter, "Quickstart": https://openrouter.ai/api/v1
- Together AI, "OpenAI compatibility": https://api.together.ai/v1
- Groq, "OpenAI Compatibility": https://api.groq.com/openai/v1
- DeepSeek, "Your First API Call": https://api.deepseek.com
- Mistral AI: https://api.mistral.ai/v1
- Ollama, "OpenAI compatibility": http://localhost:11434/v1 (no key; `OLLAMA_HOST`
  names another host, as it does for Ollama's own command line)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from disputelab.llm.model_errors import ModelConfigError
from disputelab.redact import redact_url


@dataclass(frozen=True)
class Provider:
    """One row of the table: a `name/` prefix and the endpoint it stands for."""

    name: str
    title: str  # as the provider names itself, for plans and docs
    base_url: str | None  # None: the name must give one (`vllm/M@URL`)
    key_env: str | None  # the variable holding the key; None: the server takes none
    key_required: bool
    host_env: str | None = None  # a variable that, when set, names the server's host


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider("openai", "OpenAI", "https://api.openai.com/v1", "OPENAI_API_KEY", True),
        Provider(
            "anthropic", "Anthropic", "https://api.anthropic.com/v1/", "ANTHROPIC_API_KEY", True
        ),
        Provider(
            "gemini",
            "Google Gemini",
            "https://generativelanguage.googleapis.com/v1beta/openai/",
            "GEMINI_API_KEY",
            True,
        ),
        Provider(
            "openrouter", "OpenRouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", True
        ),
        Provider("together", "Together AI", "https://api.together.ai/v1", "TOGETHER_API_KEY", True),
        Provider("groq", "Groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", True),
        Provider("deepseek", "DeepSeek", "https://api.deepseek.com", "DEEPSEEK_API_KEY", True),
        Provider("mistral", "Mistral AI", "https://api.mistral.ai/v1", "MISTRAL_API_KEY", True),
        Provider(
            "ollama", "Ollama", "http://localhost:11434/v1", None, False, host_env="OLLAMA_HOST"
        ),
        Provider("vllm", "vLLM", None, "VLLM_API_KEY", False),
    )
}

OLLAMA_PORT = 11434
# Addresses a server listens on, not ones to connect to: OLLAMA_HOST=0.0.0.0 is common.
_ANY_ADDRESS = {"0.0.0.0", "::", "[::]"}


@dataclass(frozen=True)
class ProviderName:
    """A `provider/model[@URL]` name taken apart; `url` is what will be called."""

    provider: Provider
    model: str
    url: str
    url_given: bool  # the name gave `@URL`

    @property
    def key_required(self) -> bool:
        """A provider's own endpoint needs its key; a URL of one's own may take none."""
        return self.provider.key_required and not self.url_given


def split_prefix(spec: str) -> tuple[str, str] | None:
    """(prefix, the rest) of a `prefix/...` name; None for a name without a prefix (the
    part before `/` must be a plain word, so a bare URL or a path is not taken for one)."""
    head, slash, rest = spec.partition("/")
    if not slash or not head or not all(c.isalnum() or c in "-_." for c in head):
        return None
    return head.lower(), rest


def model_id_problem(model: str, shown: str) -> str | None:
    """Why `model` (the model's own id, as the provider knows it) cannot be one: no
    provider's ids hold spaces or control characters, so one that does is a typo or two
    names run together (`a, b` where a list was meant)."""
    bad = next((c for c in model if c.isspace() or not c.isprintable()), None)
    if bad is None:
        return None
    what = "a space" if bad == " " else f"the character {bad!r}"
    return f"model {shown!r}: a model's id holds no spaces or control characters, not {what}"


def resolve(provider: Provider, rest: str, shown: str) -> ProviderName:
    """The endpoint `provider/REST` names (`shown` is the whole name, redacted, for
    messages): REST is `MODEL` or `MODEL@URL`."""
    model, at, url = rest.partition("@")
    if not model.strip():
        raise ModelConfigError(f"model {shown!r} names no model after '{provider.name}/'")
    if problem := model_id_problem(model, shown):
        raise ModelConfigError(problem)
    if at and not url.strip():
        raise ModelConfigError(f"model {shown!r} names no URL after '@'")
    if url:
        return ProviderName(provider, model, url, True)
    if provider.base_url is None:
        raise ModelConfigError(
            f"model {shown!r}: {provider.title} has no endpoint of its own; name the "
            f"server, {provider.name}/{model}@http://HOST:PORT/v1"
        )
    return ProviderName(provider, model, _host_override(provider) or provider.base_url, False)


def _host_override(provider: Provider) -> str | None:
    """The endpoint on the host the provider's host variable names (OLLAMA_HOST), read
    as Ollama reads it: `host`, `host:port` (port 11434 unless given) or a URL (its
    scheme's port unless given); None when the variable is unset."""
    value = os.environ.get(provider.host_env or "", "").strip() if provider.host_env else ""
    if not value:
        return None
    url = value if "://" in value else f"http://{value}"
    try:
        parts = urlsplit(url)
        port = parts.port or (None if "://" in value else OLLAMA_PORT)
        host = parts.hostname or ""
    except ValueError:
        raise ModelConfigError(
            f"{provider.host_env} is not a host, host:port or URL; fix or unset it"
        ) from None
    if not host or host in _ANY_ADDRESS:
        host = "localhost"
    netloc = f"[{host}]" if ":" in host else host
    netloc += f":{port}" if port else ""
    if "@" in parts.netloc:
        netloc = f"{parts.netloc.rpartition('@')[0]}@{netloc}"
    return urlunsplit((parts.scheme, netloc, f"{parts.path.rstrip('/')}/v1", "", ""))


def describe(name: ProviderName) -> str:
    """One line for a plan: the provider, where it is called, and the key it reads."""
    key = name.provider.key_env
    if key is None:
        sends = "no key"
    elif name.key_required:
        sends = f"key from {key}"
    else:
        sends = f"key from {key} if set"
    return f"{name.provider.title} at {redact_url(name.url)}, {sends}"


def provider_of(spec: str) -> str | None:
    """`describe` for a `provider/model` name; None for any other name, or for one that
    cannot be used (its check says why)."""
    prefixed = split_prefix(spec)
    if prefixed is None or prefixed[0] not in PROVIDERS:
        return None
    try:
        return describe(resolve(PROVIDERS[prefixed[0]], prefixed[1], spec))
    except ModelConfigError:
        return None
