"""How an experiment spec travels through the code: the files it passes through, in order.

It runs `disputelab experiment SPEC` in this process, through the command line's own entry
point (`disputelab.cli.main`, with sys.argv set), under `sys.setprofile`, and records every
call of a function defined in a disputelab source file whose arguments hold the spec (see
`holds_spec`: the raw mapping read from the file, the validated spec, or an object that
holds either; classes named like a plan count as the spec too, so the same test works
after a refactor that replaces the spec by a plan object). From that sequence of calls:

- files: the distinct disputelab files entered;
- transitions: consecutive recorded calls in different files;
- returns: times the path comes back to a file it had already left.

Each is given three ways: over every call; over the first call of each function only (the
route, the same whatever the size of the grid, where every call also counts the
runner -> executor -> episode loop three times per episode); and over the calls that
carry the spec itself (ExperimentSpec or the mapping), without the plan classes. Compare
a tree before and after a refactor on the same spec, mode and row. A real run of a small
spec (2 scenarios, 1 replicate) is the mode that shows the whole back-and-forth:
validation, planning, the runner re-deriving from the spec, the stored config, the
executor and the episodes; a dry run stops after planning, and a resume adds only the
check against the stored config.

Modes: `dry-run` (`experiment SPEC --dry-run`: validation and planning), `run` (the
experiment itself, in a fresh store: validation, planning, the runner, the stored config,
scoring; pass `--replicates 1 --limit-scenarios 2` after `--` for a small grid), and
`resume` (a run, unprofiled, then `--resume` profiled: the stored config read back and
compared). Only calls in the main thread are seen; the local executor plays every
episode there. A resumed generator or coroutine is not a new call and is not counted.

Usage: python benchmarks/spec_path.py SPEC.yaml [--mode dry-run|run|resume] [--data DIR]
       [--store DIR] [--path] [--json] [-- EXTRA EXPERIMENT OPTIONS]
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import json
import os
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import disputelab
from disputelab.cli import main as cli_main

PACKAGE = str(Path(disputelab.__file__).resolve().parent) + os.sep
# Class names that stand for the spec. ExperimentSpec is the validated spec; "Plan" as a
# word in a class name (EpisodePlan, PlanSummary, ExperimentPlan, ...; not "Planned" or
# "Planning") is a plan made from it. The settlement protocol's MCTS planner settings
# (PlanConfig) are a search plan, not an experiment's, and are left out.
SPEC_CLASSES = re.compile(r"^ExperimentSpec$|Plan(?![a-z])")
NOT_SPEC_CLASSES = frozenset({"PlanConfig"})
# Keys that mark a mapping as the spec read from its file (or a dump of it).
SPEC_KEYS = frozenset({"name", "scenarios"})
GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def is_spec(value: object, plans: bool = True) -> bool:
    """The spec itself: a mapping with the spec's `name` and `scenarios` keys (the raw
    YAML mapping, a copy with overrides, a dump of the validated spec, a stored config),
    or an instance of a disputelab class named ExperimentSpec, or (with `plans`) named
    like a plan."""
    if isinstance(value, dict):
        return value.keys() >= SPEC_KEYS
    cls = type(value)
    if not cls.__module__.startswith("disputelab") or cls.__name__ in NOT_SPEC_CLASSES:
        return False
    if cls.__name__ == "ExperimentSpec":
        return True
    return plans and SPEC_CLASSES.search(cls.__name__) is not None


def holds_spec(value: object, plans: bool = True) -> bool:
    """The spec, or an object that holds it one level down: an attribute of an instance,
    an item of a list, tuple or set, or a value of a mapping (a list of grids, *args)."""
    try:
        return _holds_spec(value, plans)
    except Exception:  # an object that refuses to be looked into holds nothing we know of
        return False


def _holds_spec(value: object, plans: bool) -> bool:
    if is_spec(value, plans):
        return True
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(is_spec(v, plans) for v in value)
    if isinstance(value, dict):
        return any(is_spec(v, plans) for v in value.values())
    attrs: Iterable[object] = ()
    if hasattr(value, "__dict__") and not isinstance(value, type):
        with contextlib.suppress(TypeError):
            attrs = vars(value).values()
    slots = getattr(type(value), "__slots__", ())
    if isinstance(slots, str):
        slots = (slots,)
    extra = [getattr(value, s, None) for s in slots if isinstance(s, str)]
    return any(is_spec(v, plans) for v in [*attrs, *extra])


@dataclass
class Recorder:
    """The recorded calls in call order: the file (relative to the package), the function,
    and whether only a plan class made it count (no ExperimentSpec or mapping in reach);
    `raw` holds the calls handed the raw spec itself as an argument (the ExperimentSpec or
    the mapping, not an object that holds one): the calls that read the spec again."""

    events: list[tuple[str, str, bool]] = field(default_factory=list)
    raw: list[tuple[str, str]] = field(default_factory=list)
    resumable: dict[int, FrameType] = field(default_factory=dict)

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        code = frame.f_code
        if not code.co_filename.startswith(PACKAGE):
            return
        if code.co_flags & GENERATOR_FLAGS and self.resumable.get(id(frame)) is frame:
            return  # a generator or coroutine resumed, not called again
        n = code.co_argcount + code.co_kwonlyargcount
        n += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
        values = [frame.f_locals.get(name) for name in code.co_varnames[:n]]
        if any(holds_spec(v, plans=False) for v in values):
            via_plan = False
        elif any(holds_spec(v) for v in values):
            via_plan = True
        else:
            return
        if code.co_flags & GENERATOR_FLAGS:
            self.resumable[id(frame)] = frame  # held, so that its id is not reused
        where = code.co_filename[len(PACKAGE) :]
        self.events.append((where, code.co_qualname, via_plan))
        if any(is_spec(v, plans=False) for v in values):
            self.raw.append((where, code.co_qualname))


@dataclass
class Figures:
    calls: int
    files: list[str]  # in order of first entry
    transitions: int
    returns: int
    path: list[str]  # the files in order, consecutive repeats collapsed
    per_file: dict[str, int]


def figures(events: list[tuple[str, str]]) -> Figures:
    """The figures of a sequence of (file, function) calls."""
    path: list[str] = []
    for file, _ in events:
        if not path or path[-1] != file:
            path.append(file)
    seen: set[str] = set()
    returns = 0
    for file in path:
        returns += file in seen
        seen.add(file)
    files = list(dict.fromkeys(f for f, _ in events))
    return Figures(
        calls=len(events),
        files=files,
        transitions=max(len(path) - 1, 0),
        returns=returns,
        path=path,
        per_file=dict(Counter(f for f, _ in events)),
    )


def invoke(argv: list[str], recorder: Recorder | None) -> tuple[int, str]:
    """Run the command line with `argv` (profiled when a recorder is given); its exit
    status and what it printed."""
    saved = sys.argv
    sys.argv = ["disputelab", *argv]
    printed = io.StringIO()
    code = 0
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            if recorder is not None:
                sys.setprofile(recorder)
            try:
                cli_main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            finally:
                sys.setprofile(None)
    finally:
        sys.argv = saved
    return code, printed.getvalue()


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    extra: list[str] = []
    if "--" in args_in:
        cut = args_in.index("--")
        args_in, extra = args_in[:cut], args_in[cut + 1 :]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spec", help="experiment spec (YAML)")
    ap.add_argument("--mode", choices=("dry-run", "run", "resume"), default="dry-run")
    ap.add_argument("--data", help="datasets folder (sets DISPUTELAB_DATA for agentmediation:)")
    ap.add_argument("--store", help="store folder (default: a fresh temporary one)")
    ap.add_argument("--path", action="store_true", help="also print the path, file by file")
    ap.add_argument("--calls", action="store_true", help="also print every recorded call")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(args_in)
    if args.data:
        os.environ["DISPUTELAB_DATA"] = str(Path(args.data).resolve())
    with tempfile.TemporaryDirectory(prefix="spec-path-") as tmp:
        store = args.store or str(Path(tmp) / "store")
        os.environ["DISPUTELAB_STORE"] = store
        command = ["--store", store, "experiment", args.spec, *extra]
        if args.mode == "dry-run":
            command.append("--dry-run")
        if args.mode == "resume":
            code, printed = invoke(command, None)
            if code != 0:
                print(printed, file=sys.stderr)
                return code
            command.append("--resume")
        recorder = Recorder()
        code, printed = invoke(command, recorder)
    if code != 0:
        print(printed, file=sys.stderr)
        print(f"error: the command exited with status {code}", file=sys.stderr)
        return code
    every = [(file, function) for file, function, _ in recorder.events]
    variants = {
        "spec or plan, every call": figures(every),
        "spec or plan, first call of each function": figures(list(dict.fromkeys(every))),
        "spec only (no *Plan* class), every call": figures(
            [(file, function) for file, function, via_plan in recorder.events if not via_plan]
        ),
        "the raw spec as an argument, every call": figures(recorder.raw),
    }
    f = variants["spec or plan, every call"]
    if args.json:
        print(
            json.dumps(
                {
                    "spec": args.spec,
                    "mode": args.mode,
                    "extra": extra,
                    **{name: vars(v) for name, v in variants.items()},
                }
            )
        )
        return 0
    shown = " ".join([args.spec, *extra])
    print(f"spec {shown}, mode {args.mode}")
    print(
        f"  {'calls that carry the spec':<44} {'calls':>6} {'files':>6} {'trans.':>7} "
        f"{'returns':>8}"
    )
    for name, v in variants.items():
        row = f"{v.calls:>6} {len(v.files):>6} {v.transitions:>7} {v.returns:>8}"
        print(f"  {name:<44} {row}")
    print("  files (first entry order, calls):")
    for file in f.files:
        print(f"    {file}  {f.per_file[file]}")
    if args.path:
        print(
            "  path (first call of each function): "
            + " > ".join(variants["spec or plan, first call of each function"].path)
        )
        print("  path (every call): " + " > ".join(f.path))
    if args.calls:
        for file, function, via_plan in recorder.events:
            print(f"    {file}:{function}{' (plan)' if via_plan else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
