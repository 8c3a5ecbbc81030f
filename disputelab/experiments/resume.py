"""Resuming an experiment: the spec it started with, read back, must match.

A stored config may come from an older version, with fields or defaults that have since
changed; it is read with today's defaults except where a default changed behaviour.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from disputelab.plan.experiment import ExperimentPlan
from disputelab.plan.spec import ExperimentSpec, SpecError, with_shorthand_params
from disputelab.protocols.base import DEFAULT_PROTOCOL, PROTOCOLS, get_protocol
from disputelab.redact import redact_deep
from disputelab.registry import UnknownPluginError
from disputelab.store.sqlite import Store, StoreError


def changed_fields(stored: dict[str, Any], spec: ExperimentSpec) -> list[str]:
    """Fields (protocol parameters by their own names) in which `spec` differs from the one
    an experiment started with; concurrency may change on resume. A config from an older
    version is read with today's defaults."""
    try:
        old = with_shorthand_params(_own_params_only(stored))
        before = _flat(ExperimentSpec.model_validate(_old_defaults(old)))
    except ValueError:  # pydantic's ValidationError among them
        return []  # written by a version whose fields we cannot compare; do not block it
    now = redact_deep(_flat(spec))  # stored configs hold model URLs redacted
    # Concurrency may change on resume, and ablations may be added to a finished grid:
    # neither changes an episode of it.
    free = ("concurrency", "ablate")
    return [k for k in now if k not in free and before.get(k) != now[k]]


# Defaults that changed: a config written before a parameter existed was played with the
# old behaviour, which the parameter's value here names (rule parties broadcast their
# acceptable sets until `disclosure` came, with `negotiator` as its default).
_BEFORE_THEY_EXISTED = {"disclosure": "full"}


def _old_defaults(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored config with each changed default it lacks set to the old behaviour."""
    params = stored.get("params")
    if not isinstance(params, dict):
        return stored
    try:
        kind = get_protocol(stored.get("protocol", DEFAULT_PROTOCOL)).Params
    except UnknownPluginError:
        return stored
    own = kind.model_fields
    missing = {k: v for k, v in _BEFORE_THEY_EXISTED.items() if k in own and k not in params}
    return {**stored, "params": kind.as_played({**params, **missing})}


def _own_params_only(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored config without top-level parameters of other protocols: versions before
    `params:` wrote every protocol's parameters (budget and rounds) into every config."""
    try:
        own = get_protocol(stored.get("protocol", DEFAULT_PROTOCOL)).Params.model_fields
    except UnknownPluginError:
        return stored
    others = {f for _, p in PROTOCOLS.items() for f in p.Params.model_fields} - set(own)
    return {k: v for k, v in stored.items() if k not in others}


def _flat(spec: ExperimentSpec) -> dict[str, Any]:
    """The spec's fields and every protocol parameter, at its default where left unset
    (a config stored without a temperature was run at the default one)."""
    d = spec.model_dump()
    params = spec.protocol_params().model_dump()
    return {**{k: v for k, v in d.items() if k != "params"}, **params}


def check_resume(store: Store, plan: ExperimentPlan, resume: bool) -> bool:
    """Whether the experiment exists already; refuse to overwrite it, or to resume it with
    a changed spec."""
    spec = plan.sent or plan.spec
    exists = spec.name in {r["run_id"] for r in store.runs()}
    if exists and not resume:
        raise StoreError(
            f"experiment {spec.name!r} already exists in {store.root}; to continue it "
            "give `resume`, or give the spec a new name"
        )
    changed = changed_fields(store.run_info(spec.name)[1], spec) if exists else []
    if changed:
        raise SpecError(
            "spec",
            [
                f"experiment {spec.name!r} was started with a different {', '.join(changed)}; "
                "resume it with the spec it started with, or give the spec a new name"
            ],
        )
    return exists


def create_or_join(store: Store, plan: ExperimentPlan, resume: bool) -> None:
    """Record the experiment; when another process recorded it first, a `--resume` joins
    it (if the specs agree) and anything else is refused."""
    try:
        store.create_run("experiment", plan.name, plan.config, run_id=plan.name, parent=plan.parent)
    except sqlite3.IntegrityError:
        if not resume:
            raise StoreError(
                f"experiment {plan.name!r} was started by another process a moment ago; "
                "give `resume` to work on it alongside that process"
            ) from None
        check_resume(store, plan, resume)
