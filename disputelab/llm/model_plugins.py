"""Model backends from installed packages: a `prefix/` of one's own, through an entry point.

A package names a factory under the `disputelab.models` entry-point group; the entry
point's name is the prefix it answers for:

    [project.entry-points."disputelab.models"]
    myco = "myco_models:endpoint"

`myco/some-model` and `myco/some-model@URL` then call `endpoint(ModelRequest(...))`,
which returns an `Endpoint` (a backend with its prices and limits) or just a `ChatModel`
(then unpriced, with the run's concurrency and an adaptive limit). A plug-in is imported
only when a name with its prefix is used, so a broken one stops only the runs that name
it, with one line that names it. The built-in prefixes (`openai/`, `anthropic/`, ...)
cannot be taken: a plug-in that claims one is reported, as is a prefix two claim.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from disputelab.errors import DisputelabError
from disputelab.llm.base import ChatModel
from disputelab.llm.endpoint import Endpoint
from disputelab.llm.model_errors import ModelConfigError
from disputelab.llm.openai_defaults import DEFAULT_TIMEOUT_S
from disputelab.llm.providers import PROVIDERS
from disputelab.llm.wrappers import Prices
from disputelab.redact import redact

MODEL_GROUP = "disputelab.models"


@dataclass(frozen=True)
class ModelRequest:
    """What a plug-in is asked to build. `spec` is the name as given (a URL in it may
    hold credentials: use it, never write it); `shown` is the same name redacted, for
    messages and for the backend's `name`."""

    spec: str
    shown: str
    prefix: str
    model: str  # after `prefix/`, before any `@`
    url: str | None  # after `@`, if the name gives one
    timeout_s: float = DEFAULT_TIMEOUT_S
    concurrency: int | None = None  # the run's


ModelFactory = Callable[[ModelRequest], "Endpoint | ChatModel"]


def installed() -> dict[str, EntryPoint]:
    """The installed model plug-ins by prefix; ModelConfigError for a prefix that is
    built in or claimed twice (a broken installation, named so it can be mended)."""
    found: dict[str, EntryPoint] = {}
    for ep in sorted(entry_points(group=MODEL_GROUP), key=lambda e: (e.name, e.value)):
        prefix = ep.name.strip().rstrip("/").lower()
        if prefix in PROVIDERS:
            raise ModelConfigError(
                f"the model plug-in {ep.value!r} ({MODEL_GROUP} entry point {ep.name!r}) "
                f"claims the built-in prefix '{prefix}/'; uninstall it or rename its entry point"
            )
        if prefix in found:
            raise ModelConfigError(
                f"two model plug-ins claim the prefix '{prefix}/' ({found[prefix].value!r} "
                f"and {ep.value!r}); uninstall one"
            )
        found[prefix] = ep
    return found


def plugin_endpoint(ep: EntryPoint, request: ModelRequest) -> Endpoint:
    """The endpoint the plug-in `ep` builds for `request`; one line naming the plug-in
    when it cannot be loaded, fails, or returns something that is no model."""
    where = f"the model plug-in {request.prefix!r} ({MODEL_GROUP} entry point {ep.value!r})"
    try:
        factory: Any = ep.load()
    except Exception as exc:  # any fault of a third party's import: name the package
        raise ModelConfigError(f"{where} cannot be loaded: {_why(exc)}") from None
    if not callable(factory):
        raise ModelConfigError(f"{where} is not a function of a ModelRequest")
    try:
        made = factory(request)
    except DisputelabError:
        raise  # the plug-in's own one-line error (a missing key, a bad URL)
    except Exception as exc:
        raise ModelConfigError(f"{where} failed on {request.shown!r}: {_why(exc)}") from None
    if isinstance(made, Endpoint):
        return made
    if callable(getattr(made, "complete", None)) and isinstance(getattr(made, "name", None), str):
        return Endpoint(made, Prices(), None, None, request.timeout_s, adaptive=True)
    raise ModelConfigError(
        f"{where} returned {type(made).__name__}, not an Endpoint or a ChatModel"
    )


def _why(exc: BaseException) -> str:
    first = (str(exc).splitlines() or [""])[0]
    return redact(f"{type(exc).__name__}: {first}"[:300])
