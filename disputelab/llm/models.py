"""From the model names users type to wrapped, metered `ChatModel`s.

Names: `rule` (no LLM), `local` (the embedded model), `openai:MODEL` (the OpenAI API),
`openai:MODEL@http://host:port/v1` (any OpenAI-compatible server), `PROVIDER/MODEL` as
other tools write it (`anthropic/claude-...`, `ollama/llama3`, `vllm/M@URL`; the table is
`providers.PROVIDERS`), a prefix an installed plug-in answers for (`model_plugins`), or a
profile from a `disputelab.toml`. A profile names the *environment variable* holding the
key, never the key itself: keys are read when a model is built (`keys.read_key`: the
environment, else a `.env` file) and are never written anywhere. Credentials typed into
an endpoint URL are kept in memory only; every message here shows the URL redacted.
"""

from __future__ import annotations

import ipaddress
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from disputelab.llm.base import ChatModel
from disputelab.llm.cache import Cached, ReplyCache, ResponseCache
from disputelab.llm.endpoint import Endpoint
from disputelab.llm.keys import read_key
from disputelab.llm.model_errors import (
    MissingExtraError,
    MissingKeyError,
    ModelConfigError,
)
from disputelab.llm.openai_defaults import (
    DEFAULT_MAX_RETRY_AFTER_S,
    DEFAULT_TIMEOUT_S,
    calls_in_flight,
)
from disputelab.llm.providers import (
    PROVIDERS,
    ProviderName,
    model_id_problem,
    resolve,
    split_prefix,
)
from disputelab.llm.wrappers import Ledger, Limited, Metered, Prices, Retrying
from disputelab.redact import redact, remember_url_secrets, split_userinfo
from disputelab.scenario.inputs import UserFileError, read_user_file

if TYPE_CHECKING:
    from disputelab.llm.embedding_endpoint import EndpointEmbedder
    from disputelab.llm.openai_backend import OpenAICompatible

CONFIG_NAME = "disputelab.toml"

__all__ = [
    "CONFIG_NAME",
    "Endpoint",
    "MissingExtraError",
    "MissingKeyError",
    "ModelConfigError",
    "ModelHub",
    "Profile",
    "check_installed",
    "load_profiles",
    "parse_model",
]


def check_installed(spec: str) -> None:
    """Raise MissingExtraError when `spec` names a model this installation cannot run.
    Commands call it before they store anything, so that no run is left behind that
    could only fail. That stops a re-run whose every reply is cached as well, by design:
    whether a run stays within the cache is known only once it has played, and a run that
    cannot finish otherwise is worse than asking for the extra up front. A model hub
    itself does not check, so the library can still replay a cache without the extra."""
    from disputelab.llm.local import local_available

    if spec == "local" and (reason := local_available()) is not None:
        raise MissingExtraError(f"model 'local': {reason}")


# The highest sampling temperature a profile may set (the protocols' parameters agree).
MAX_TEMPERATURE = 2.0


def _temperature_problem(value: Any) -> str | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok and 0 <= value <= MAX_TEMPERATURE:
        return None
    return f"must be a number from 0 to {MAX_TEMPERATURE:g}, not {value!r}"


class Profile(BaseModel):
    """One endpoint in `disputelab.toml` under `[models.NAME]`."""

    model_config = ConfigDict(extra="forbid")

    model: str
    base_url: str | None = None
    api_key_env: str | None = Field(
        default=None, description="Name of the environment variable that holds the key."
    )
    input_price_per_m: float | None = Field(default=None, ge=0)
    output_price_per_m: float | None = Field(default=None, ge=0)
    concurrency: int | None = Field(
        default=None,
        ge=1,
        description="Calls in flight at once; unset, the experiment's concurrency (or 8).",
    )
    rpm: float | None = Field(default=None, gt=0)
    json_schema: bool = True
    adaptive: bool = Field(
        default=True,
        description="Cut the calls in flight on a 429 or timeout, then grow them back.",
    )
    timeout: float | None = Field(
        default=None, gt=0, le=3600, description="Seconds one request may take."
    )
    deadline: float | None = Field(
        default=None, gt=0, description="Seconds one call may take, retries included."
    )
    max_retry_after: float = Field(
        default=DEFAULT_MAX_RETRY_AFTER_S,
        ge=0,
        description="Longest Retry-After wait honoured, in seconds.",
    )
    temperature: float | dict[str, float] | None = Field(
        default=None,
        description="Sampling temperature for every role that uses this model (a number), "
        "or per role (`{parties = 0.6, mediator = 0.2}`); it fills a role's temperature "
        "only where the run leaves it unset.",
    )

    @field_validator("temperature", mode="before")
    @classmethod
    def _one_line_temperature(cls, v: Any) -> Any:
        """One plain line per fault, naming the role, instead of the union's errors."""
        if v is None:
            return v
        if isinstance(v, dict):
            for role, t in v.items():
                problem = _temperature_problem(t)
                if problem is not None:
                    raise PydanticCustomError("temperature", f"{role}: {problem}")
            return v
        problem = _temperature_problem(v)
        if problem is not None:
            raise PydanticCustomError("temperature", f"{problem} (or a table of role = number)")
        return v

    def temperature_for(self, role: str) -> float | None:
        """The temperature this profile sets for `role`, None when it sets none."""
        if isinstance(self.temperature, dict):
            return self.temperature.get(role)
        return self.temperature


def load_profiles(path: Path | None = None) -> dict[str, Profile]:
    """Profiles from `disputelab.toml` in the working directory (or `path`)."""
    p = path or Path(CONFIG_NAME)
    if not p.exists():
        return {}
    try:
        # The safe reader: a regular file of modest size, never a device or a FIFO.
        data = tomllib.loads(read_user_file(p, what="a TOML file of model profiles"))
    except UserFileError as exc:
        raise ModelConfigError(f"{p}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ModelConfigError(f"{p}: cannot read: {exc}") from None
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise ModelConfigError(
            f"{p}: models: a table of profiles ([models.NAME] sections), not "
            f"{type(models).__name__} {str(models)[:40]!r}"
        )
    out: dict[str, Profile] = {}
    for name, body in models.items():
        if not isinstance(body, dict):
            raise ModelConfigError(
                f"{p}: models.{name}: a table of settings ([models.{name}]), not "
                f"{type(body).__name__} {str(body)[:40]!r}"
            )
        if "api_key" in body:
            raise ModelConfigError(
                f"{p}: models.{name}.api_key: keys do not belong in files; put the key in an "
                "environment variable and name it with api_key_env"
            )
        try:
            out[name] = Profile.model_validate(body)
        except ValidationError as exc:
            e = exc.errors(include_url=False)[0]
            loc = ".".join(str(x) for x in e["loc"])
            raise ModelConfigError(f"{p}: models.{name}.{loc}: {e['msg']}") from None
    return out


def _openai_backend(shown: str, *args: Any, **kwargs: Any) -> OpenAICompatible:
    """The backend, or a one-line error when the environment names a proxy that is not a
    URL (the backend reads HTTP_PROXY, HTTPS_PROXY or ALL_PROXY as it is built)."""
    import httpx2  # the SDK's HTTP package: imported only when a model is used

    from disputelab.llm.openai_backend import OpenAICompatible as Backend

    try:
        return Backend(*args, **kwargs)
    except httpx2.InvalidURL as exc:
        raise ModelConfigError(
            f"{shown}: a proxy in the environment (HTTP_PROXY, HTTPS_PROXY or ALL_PROXY) is "
            f"not a valid URL: {redact(str(exc))}"
        ) from None


def parse_model(
    spec: str,
    profiles: dict[str, Profile],
    timeout_s: float | None = None,
    concurrency: int | None = None,
) -> Endpoint:
    """A backend for a model name, with its prices and limits. `timeout_s` (from
    `--timeout`) overrides every profile's; `concurrency` is the run's, which an endpoint
    without a limit of its own takes, and sizes the connection pool."""
    if "@" in spec:  # a URL's password and query values are masked wherever they appear
        remember_url_secrets(spec.partition("@")[2])
    shown = redact(spec)
    if spec == "local":
        return _local_endpoint(timeout_s)
    if spec in profiles:
        return _profile_endpoint(spec, shown, profiles[spec], timeout_s, concurrency)
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        return _openai_endpoint(spec.removeprefix("openai:"), shown, timeout_s, concurrency)
    prefixed = split_prefix(spec)
    if prefixed is not None and prefixed[0] in PROVIDERS:
        name = resolve(PROVIDERS[prefixed[0]], prefixed[1], shown)
        return _provider_endpoint(name, shown, timeout_s, concurrency)
    if prefixed is not None:
        from disputelab.llm import model_plugins

        plugin = model_plugins.installed().get(prefixed[0])
        if plugin is not None:
            return _plugin_endpoint(plugin, spec, shown, prefixed, timeout_s, concurrency)
    raise ModelConfigError(f"unknown model {shown!r}; use {accepted_names(profiles)}")


def accepted_names(profiles: dict[str, Profile]) -> str:
    """The names a model may have, for the message about one that is none of them."""
    from disputelab.llm import model_plugins

    try:
        plugins = sorted(model_plugins.installed())
    except ModelConfigError:
        plugins = []  # said when one of them is named; here the name is the fault
    prefixes = ", ".join(f"{p}/" for p in [*PROVIDERS, *plugins])
    known = ", ".join(sorted(profiles)) or "none defined"
    return (
        f"rule, local, openai:MODEL[@URL], PROVIDER/MODEL[@URL] ({prefixes}) or a "
        f"profile from {CONFIG_NAME} (profiles: {known})"
    )


def _provider_endpoint(
    name: ProviderName, shown: str, timeout_s: float | None, concurrency: int | None
) -> Endpoint:
    """The endpoint `provider/MODEL[@URL]` names: unpriced, with an adaptive limit, its
    key read from the provider's variable (required for the provider's own endpoint)."""
    remember_url_secrets(name.url)  # OLLAMA_HOST may carry credentials too
    _check_url(shown, name.url)
    key_env = name.provider.key_env
    if key_env is not None and split_userinfo(name.url)[1] is None:
        _need_key(shown, key_env, required=name.key_required)
    timeout = timeout_s or DEFAULT_TIMEOUT_S
    backend = _openai_backend(
        shown,
        name.model,
        name.url,
        key_env,
        timeout_s=timeout,
        connections=calls_in_flight(None, concurrency),
        name=shown,
    )
    return Endpoint(backend, Prices(), None, None, timeout, adaptive=True)


def _plugin_endpoint(
    plugin: Any,
    spec: str,
    shown: str,
    prefixed: tuple[str, str],
    timeout_s: float | None,
    concurrency: int | None,
) -> Endpoint:
    """The endpoint an installed model plug-in builds for `prefix/MODEL[@URL]`."""
    from disputelab.llm.model_plugins import ModelRequest, plugin_endpoint

    model, at, url = prefixed[1].partition("@")
    if not model.strip():
        raise ModelConfigError(f"model {shown!r} names no model after '{prefixed[0]}/'")
    if at and not url.strip():
        raise ModelConfigError(f"model {shown!r} names no URL after '@'")
    request = ModelRequest(
        spec, shown, prefixed[0], model, url or None, timeout_s or DEFAULT_TIMEOUT_S, concurrency
    )
    return plugin_endpoint(plugin, request)


def _local_endpoint(timeout_s: float | None) -> Endpoint:
    """The embedded model: free, one call at a time, each call bounded from when it gets
    the model, by `--timeout` when given, else by a deadline scaled from the tokens it
    asks for and the speed measured on this machine."""
    from disputelab.llm.local import LOCAL_CALLS, LocalLlama

    timeout = timeout_s or DEFAULT_TIMEOUT_S
    backend = LocalLlama(timeout_s=timeout_s)
    return Endpoint(backend, Prices(0.0, 0.0), LOCAL_CALLS, None, timeout, bounds_own_calls=True)


def _profile_endpoint(
    spec: str, shown: str, p: Profile, timeout_s: float | None, concurrency: int | None
) -> Endpoint:
    """The endpoint a `disputelab.toml` profile describes; `shown` is `spec` redacted."""
    # A named key must be there; the OpenAI API itself always needs one.
    key_env = p.api_key_env or (None if p.base_url else "OPENAI_API_KEY")
    if p.base_url:
        remember_url_secrets(p.base_url)
        _check_url(shown, p.base_url)
        if p.api_key_env and split_userinfo(p.base_url)[1] is not None:
            raise ModelConfigError(
                f"profile {spec!r} gives credentials twice (in base_url and api_key_env); keep one"
            )
    _need_key(shown, key_env, required=key_env is not None)
    timeout = timeout_s or p.timeout or DEFAULT_TIMEOUT_S
    backend = _openai_backend(
        shown,
        p.model,
        p.base_url,
        key_env,
        timeout_s=timeout,
        json_schema=p.json_schema,
        connections=calls_in_flight(p.concurrency, concurrency),
    )
    prices = Prices(p.input_price_per_m, p.output_price_per_m)
    return Endpoint(
        backend,
        prices,
        p.concurrency,
        p.rpm,
        timeout,
        p.deadline,
        p.max_retry_after,
        adaptive=p.adaptive,
    )


def _openai_endpoint(
    name: str, shown: str, timeout_s: float | None, concurrency: int | None
) -> Endpoint:
    """The endpoint `openai:MODEL` or `openai:MODEL@URL` names (`name` is the part after
    `openai:`; `shown` the whole spec, redacted): unpriced, with an adaptive limit."""
    model, at, url = name.partition("@")
    if not model:
        raise ModelConfigError(f"model {shown!r} names no model before '@'")
    if problem := model_id_problem(model, shown):
        raise ModelConfigError(problem)
    if at and not url.strip():  # not the OpenAI API by default: the URL was meant
        raise ModelConfigError(f"model {shown!r} names no URL after '@'")
    if url:
        _check_url(shown, url)
    # The OpenAI API always needs the key; a server of one's own may need none.
    _need_key(shown, "OPENAI_API_KEY", required=not url)
    timeout = timeout_s or DEFAULT_TIMEOUT_S
    backend = _openai_backend(
        shown,
        model,
        url or None,
        "OPENAI_API_KEY",
        timeout_s=timeout,
        connections=calls_in_flight(None, concurrency),
    )
    return Endpoint(backend, Prices(), None, None, timeout, adaptive=True)


def _check_url(spec: str, url: str) -> None:
    """An endpoint URL that can never be reached fails at once, not after six retries as
    'cannot connect' (or with a traceback, for a port that is not a number)."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # an unbalanced IPv6 bracket
        raise ModelConfigError(f"model {spec!r}: the endpoint URL is malformed ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise ModelConfigError(
            f"model {spec!r}: the endpoint must be an http:// or https:// URL, "
            f"not {parts.scheme or 'one without a scheme'}"
        )
    try:
        parts.port  # noqa: B018 (urlsplit checks the port only when asked for it)
    except ValueError:
        raise ModelConfigError(
            f"model {spec!r}: the port must be a number from 0 to 65535"
        ) from None
    if not parts.hostname:
        raise ModelConfigError(f"model {spec!r}: the endpoint URL names no host")
    _check_address(spec, parts.hostname)


def _check_address(spec: str, host: str) -> None:
    """A host written as numbers must be an IPv4 address: 999.1.1.1 is no name either."""
    if not re.fullmatch(r"[0-9.]+", host):
        return
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        raise ModelConfigError(
            f"model {spec!r}: the endpoint's host {host[:40]} is not a valid IPv4 address"
        ) from None


def _need_key(spec: str, env: str | None, required: bool) -> None:
    """Fail before any call when the key a model needs is neither in the environment nor
    in a `.env` file. An optional key is looked up too, so that a `.env` that does not
    parse is said now rather than when the backend is built mid-run."""
    if env is None or read_key(env) or not required:
        return
    local = "; a local server takes openai:MODEL@URL" if env == "OPENAI_API_KEY" else ""
    raise MissingKeyError(
        f"model {spec!r} needs an API key: set {env} in the environment or in a .env file "
        f"(keys are read from there and never stored){local}"
    )


@dataclass
class ModelHub:
    """Builds one wrapped stack per endpoint, shared by every role that uses it (so the
    limits are per endpoint), and one metered view of it per role."""

    cache_path: Path | None
    profiles: dict[str, Profile] = field(default_factory=dict)
    ledger: Ledger = field(default_factory=Ledger)
    timeout_s: float | None = None  # --timeout: overrides every endpoint's
    concurrency: int | None = None  # the run's: endpoints without a limit of their own take it
    # A cache to use instead of the file at cache_path: a Ray actor's view of the driver's.
    replies: ReplyCache | None = None
    _stacks: dict[str, tuple[ChatModel, Prices]] = field(default_factory=dict)
    _backends: list[ChatModel] = field(default_factory=list)
    _cache: ReplyCache | None = None
    # Per endpoint: its limits and retries, which its embeddings requests go through too.
    _parts: dict[str, tuple[Limited, Retrying]] = field(default_factory=dict)
    _embedders: dict[str, EndpointEmbedder] = field(default_factory=dict)

    def model(self, spec: str, role: str) -> ChatModel:
        if spec not in self._stacks:
            ep = parse_model(spec, self.profiles, self.timeout_s, self.concurrency)
            self._backends.append(ep.backend)
            limited = Limited(ep.backend, ep.limit(self.concurrency), ep.rpm, ep.adaptive)
            retrying = Retrying(
                limited, max_retry_after_s=ep.max_retry_after_s, deadline_s=ep.call_deadline_s
            )
            stack: ChatModel = retrying
            cache = self.open_cache()
            if cache is not None:
                stack = Cached(stack, cache)
            self._stacks[spec] = (stack, ep.prices)
            self._parts[spec] = (limited, retrying)
        stack, prices = self._stacks[spec]
        return Metered(stack, self.ledger, role, prices)

    def embedder(self, spec: str, role: str = "embeddings") -> EndpointEmbedder:
        """Embeddings from the endpoint `spec` names, under its limits and retries (the
        same ones its chat calls take) and in the response cache; usage under `role`.
        ModelConfigError for a model that is no endpoint (the embedded `local` one)."""
        from disputelab.llm.embedding_endpoint import EmbeddingBackend, EndpointEmbedder

        if spec not in self._embedders:
            self.model(spec, role)
            limited, retrying = self._parts[spec]
            backend = limited.inner
            if not isinstance(backend, EmbeddingBackend):
                raise ModelConfigError(
                    f"model {redact(spec)!r} serves no embeddings; name an endpoint "
                    "(openai:MODEL@URL or a profile) or local for the in-process model"
                )
            self._embedders[spec] = EndpointEmbedder(
                backend,
                limited,
                retrying,
                self.open_cache(),
                self.ledger.role(role, backend.name),
                self.price(spec),
            )
        return self._embedders[spec]

    async def aclose(self) -> None:
        """Close every endpoint's connections, on the loop that made them, so that no
        pooled keep-alive connection outlives its event loop. A hub used again opens new
        connections, and closing it again closes those too."""
        try:
            self.flush()
        finally:
            for backend in self._backends:
                close = getattr(backend, "aclose", None)
                if close is not None:
                    await close()

    def open_cache(self) -> ReplyCache | None:
        """The response cache every endpoint shares, opened on first use (`replies` when
        given; None without a cache path); a file that cannot be used raises `CacheError`."""
        if self._cache is None and self.replies is not None:
            self._cache = self.replies
        if self._cache is None and self.cache_path is not None:
            self._cache = ResponseCache(self.cache_path)
        return self._cache

    def flush(self) -> None:
        """Write the replies the cache holds in memory (it writes them in groups)."""
        if self._cache is not None:
            self._cache.flush()

    def price(self, spec: str) -> Prices:
        """The prices of a model already in use (unknown for anything else)."""
        return self._stacks[spec][1] if spec in self._stacks else Prices()
