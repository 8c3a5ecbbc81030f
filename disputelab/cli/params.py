"""Command-line options generated from the protocols' parameter models.

Every parameter of every registered protocol becomes an option of `disputelab run`
(`--budget`, `--rounds`, ...) with its type and help text from the model; a value given
for a protocol that lacks the parameter is a warning, and the chosen protocol's model
validates the rest. `--param KEY=VALUE` reaches parameters of protocols registered after
the command line was built (by a plug-in or a test).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

import typer

from disputelab.cli.common import err, fail
from disputelab.protocols.base import PROTOCOLS, DisputeProtocol, ParamsError, ProtocolParams


def _option_name(field: str) -> str:
    return "--" + field.replace("_", "-")


def _declaration(field: str, kind: Any) -> str:
    """The option's name; a yes/no parameter gets both its flags (`--stop-on-consensus`,
    `--no-stop-on-consensus`), so that either value can be given, a default of true
    turned off, and a preset's value undone."""
    name = _option_name(field)
    return f"{name}/--no-{name.removeprefix('--')}" if kind is bool else name


def param_fields() -> dict[str, tuple[Any, str]]:
    """Parameter name -> (type, help), across every registered protocol."""
    fields: dict[str, tuple[Any, str]] = {}
    owners: dict[str, list[str]] = {}
    for name, protocol in PROTOCOLS.items():
        for field, info in protocol.Params.model_fields.items():
            if typing.get_origin(info.annotation) is dict:
                continue  # a mapping has an option of its own (`run --behaviour`)
            owners.setdefault(field, []).append(name)
            fields.setdefault(field, (info.annotation, info.description or ""))
    return {
        f: (kind, f"{text.rstrip('.')} ({', '.join(owners[f])}).")
        for f, (kind, text) in fields.items()
    }


def with_param_options(func: Callable[..., None]) -> Callable[..., None]:
    """Give `func` (which takes `**params`) one keyword option per protocol parameter."""
    # Evaluated annotations: typer reads a set `__signature__` as it is, strings and all.
    sig = inspect.signature(func, eval_str=True)
    keep = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    extra = [
        inspect.Parameter(
            field,
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=Annotated[kind | None, typer.Option(_declaration(field, kind), help=text)],
        )
        for field, (kind, text) in param_fields().items()
        if field not in sig.parameters
    ]
    func.__signature__ = sig.replace(parameters=[*keep, *extra])  # type: ignore[attr-defined]
    func.__annotations__ = {p.name: p.annotation for p in [*keep, *extra]} | {
        "return": sig.return_annotation
    }
    return func


def parse_pairs(pairs: Sequence[str], option: str = "--param") -> dict[str, str]:
    """`KEY=VALUE` strings into a mapping; a pair without '=', or a key given twice
    (neither value is the obvious one), is an error."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            fail(f"{option} takes KEY=VALUE, not {pair!r}")
        name = key.strip().replace("-", "_")
        if name in out:
            fail(f"{option} {key.strip()} given twice ({out[name]!r}, {value.strip()!r}); keep one")
        out[name] = value.strip()
    return out


def protocol_params(
    protocol: DisputeProtocol, given: Mapping[str, Any], pairs: Sequence[str]
) -> ProtocolParams:
    """The chosen protocol's parameters from the generated options and `--param` pairs;
    options meant for other protocols are ignored with a warning."""
    own = protocol.Params.model_fields
    values: dict[str, Any] = {}
    for field, value in given.items():
        if value is None:
            continue
        if field in own:
            values[field] = value
            continue
        users = [n for n, p in PROTOCOLS.items() if field in p.Params.model_fields]
        # The turn-limit note answers a length option given to the wrong protocol.
        limits = any(w in field for w in ("budget", "round", "turn"))
        note = (limits and protocol.turn_limit_note()) or (
            f"the {protocol.name} protocol does not use it"
        )
        given_as = _option_name(field if value is not False else f"no_{field}")
        err.print(
            f"[yellow]warning:[/] {given_as} applies to {', '.join(users)}; {note}",
            highlight=False,
        )
    given_pairs = parse_pairs(pairs)
    # A pair overrides an option's value (a preset's, say); a dotted pair then adds one
    # entry to a mapping parameter, beside those given with its own option.
    values.update({k: v for k, v in given_pairs.items() if "." not in k})
    for key, value in given_pairs.items():
        if "." in key:
            _set_entry(protocol, values, key, value)
    try:
        return protocol.params(values)
    except ParamsError as exc:
        fail("; ".join(_as_options(problem) for problem in exc.problems))


def _set_entry(protocol: DisputeProtocol, values: dict[str, Any], key: str, value: str) -> None:
    """`--param behaviour.beta.avoiding=1`: one entry of a mapping parameter."""
    head, _, rest = key.partition(".")
    if not head or not rest:
        fail(f"--param takes KEY=VALUE or MAPPING.ENTRY=VALUE, not {key!r}")
    field = protocol.Params.model_fields.get(head)
    if field is None:
        known = ", ".join(protocol.Params.model_fields) or "none"
        fail(
            f"--param {key}: {head} is not a parameter of the {protocol.name} protocol "
            f"(its parameters: {known})"
        )
    if typing.get_origin(field.annotation) is not dict:
        fail(f"--param {key}: {head} is not a mapping parameter; give --param {head}=VALUE")
    nested = values.get(head, {})
    if not isinstance(nested, dict):
        fail(f"--param {key}: {head} is also given whole, as {nested!r}; keep one")
    if rest in nested:
        fail(f"{head}.{rest} given twice, with --{head} and --param; keep one")
    values[head] = {**nested, rest: value}


def _as_options(problem: str) -> str:
    """A parameter's problem as the command line names it: `turn_taking: ...` is about
    `--turn-taking`; one about the parameters together (`params: ...`) names none."""
    where, _, message = problem.partition(": ")
    if where == "params" or not message:
        return message or problem
    return f"{_option_name(where.split('.')[0])}{where[len(where.split('.')[0]) :]}: {message}"
