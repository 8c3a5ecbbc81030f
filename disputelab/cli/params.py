"""Protocol parameters on the command line: `--param KEY=VALUE` (or `-P`), completed by
the shell from every registered protocol's parameters, and listed with their types and
help by `disputelab protocols show NAME`.

Before `--param`, every parameter of every protocol was an option of `run` of its own
(`--turn-taking`, `--rounds`, ...). Those options are still accepted, hidden from
`--help`, and say that they are deprecated; the turn-budget ones (`--rounds`,
`--round-limit`, `--max-rounds`) point to `--budget`, one name for every protocol.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

import typer

from disputelab.api import PROTOCOLS, DisputeProtocol, chosen_protocol
from disputelab.cli.common import err, fail

PARAM_HELP = "KEY=VALUE or MAPPING.ENTRY=VALUE (`disputelab protocols show NAME`); repeatable."
# Parameters that have an option of their own, visible in `--help`.
FIRST_CLASS = {"budget"}


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
                continue  # a mapping is given entry by entry (`--param behaviour.X=V`)
            owners.setdefault(field, []).append(name)
            fields.setdefault(field, (info.annotation, info.description or ""))
    return {
        f: (kind, f"{text.rstrip('.')} ({', '.join(owners[f])}).")
        for f, (kind, text) in fields.items()
    }


def with_param_options(func: Callable[..., None]) -> Callable[..., None]:
    """Give `func` (which takes `**old_options`) a hidden option per protocol parameter,
    as every parameter had one before `--param`."""
    # Evaluated annotations: typer reads a set `__signature__` as it is, strings and all.
    sig = inspect.signature(func, eval_str=True)
    keep = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    extra = [
        inspect.Parameter(
            field,
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=Annotated[
                kind | None, typer.Option(_declaration(field, kind), help=text, hidden=True)
            ],
        )
        for field, (kind, text) in param_fields().items()
        if field not in sig.parameters
    ]
    func.__signature__ = sig.replace(parameters=[*keep, *extra])  # type: ignore[attr-defined]
    func.__annotations__ = {p.name: p.annotation for p in [*keep, *extra]} | {
        "return": sig.return_annotation
    }
    return func


def complete_param(incomplete: str) -> list[tuple[str, str]]:
    """Shell completion of `--param`: `KEY=` for every parameter of every protocol."""
    fields = param_fields()
    return [(f"{f}=", text) for f, (_, text) in fields.items() if f.startswith(incomplete)]


def deprecated_params(
    protocol: str | None, preset: str | None, given: Mapping[str, Any]
) -> dict[str, Any]:
    """The values of the old per-parameter options, each said to be deprecated; one the
    chosen protocol lacks is ignored with a warning, as it always was."""
    proto = chosen_protocol(protocol, preset)
    values: dict[str, Any] = {}
    for field, value in given.items():
        if value is None:
            continue
        given_as = _option_name(field if value is not False else f"no_{field}")
        if proto is not None and field not in proto.Params.model_fields:
            _warn_other_protocol(proto, field, given_as)
            continue
        instead = "--budget N" if _is_turn_budget(field) else f"--param {field}={value}"
        err.print(f"[yellow]warning:[/] {given_as} is deprecated; give {instead}", highlight=False)
        values[field] = value
    return values


def _is_turn_budget(field: str) -> bool:
    return any(p.turn_budget == field for _, p in PROTOCOLS.items())


def _warn_other_protocol(proto: DisputeProtocol, field: str, given_as: str) -> None:
    users = [n for n, p in PROTOCOLS.items() if field in p.Params.model_fields]
    note = f"the {proto.name} protocol does not use it"
    if _is_turn_budget(field) and proto.turn_budget:
        # A length option given to the wrong protocol: say what sets this one's length.
        note += f"; its turn budget ({proto.turn_budget_unit}) is --budget"
    err.print(
        f"[yellow]warning:[/] {given_as} applies to {', '.join(users)}; {note}", highlight=False
    )


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


def param_values(
    protocol: str | None, preset: str | None, values: dict[str, Any], pairs: Sequence[str]
) -> dict[str, Any]:
    """`values` with the `--param` pairs: a pair overrides an option's value (a preset's,
    say); a dotted pair then adds one entry to a mapping parameter, beside those given
    with its own option (`--behaviour`)."""
    given = parse_pairs(pairs)
    values = {**values, **{k: v for k, v in given.items() if "." not in k}}
    proto = chosen_protocol(protocol, preset)
    for key, value in given.items():
        if "." in key:
            _set_entry(proto, values, key, value)
    return values


def _set_entry(
    protocol: DisputeProtocol | None, values: dict[str, Any], key: str, value: str
) -> None:
    """`--param behaviour.beta.avoiding=1`: one entry of a mapping parameter."""
    head, _, rest = key.partition(".")
    if not head or not rest:
        fail(f"--param takes KEY=VALUE or MAPPING.ENTRY=VALUE, not {key!r}")
    if protocol is None:
        return  # the unknown protocol or preset is said by the plan
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
