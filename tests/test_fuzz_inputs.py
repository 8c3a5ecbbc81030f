"""Hostile and mangled input files never crash, hang or flood the command line (issue 18,
item 9).

A seeded generator mutates valid inputs: built-in scenario files (as YAML and as JSON),
experiment specs (and the scenario and case files they name), and small ProMediate and
AgentMediation case files written here, so that the test needs no shared data. The
mutations: byte flips, truncation, deleted keys, swapped types, huge integers, deep
nesting, huge strings, duplicate keys, bytes that are not UTF-8 and YAML alias bombs; and
devices, a FIFO, a folder and globs over /dev where a file belongs.

The inputs added since (issue 46, item 2) each get PER_KIND generated cases of one fault
each: a spec's `worlds:` and `models:` lists, `.env` files, `--model` names, the `runs`
filters (`--since`, `--status`, `--kind`), and the `view` server's `/compare` query
string (sent raw over a socket, answered 200 or a 400 page, never a 500). Every test
records its count of cases per input kind, printed in a `fuzz` section at the end.

Each case runs the console entry point (`disputelab.cli.main`, which turns usage errors
into exit status 2) in-process, from a fresh working folder, and must:

- exit 0, or exit 2 with every stderr line a one-line `error:` or `warning:` message,
  at most MAX_ERROR_LINES error lines, and exactly one where the mutation is a single
  fault of the file as a whole (a device, a huge integer, deep nesting, bad UTF-8, ...);
- never print a traceback, nor more than MAX_OUTPUT_CHARS of output;
- finish within CASE_TIMEOUT_S: a watchdog against hangs, not a speed check;
- write nothing outside its --store and --out folders.
"""

from __future__ import annotations

import copy
import io
import json
import os
import random
import re
import socket
import sys
import threading
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote_from_bytes

import pytest
import yaml

from disputelab import api
from disputelab.cli import main
from disputelab.cli.common import MAX_LINE_CHARS, MAX_PROBLEM_LINES
from disputelab.compare import BY
from disputelab.llm.providers import PROVIDERS
from disputelab.report.serve import ReportServer
from disputelab.scenario.inputs import MAX_DEPTH, read_user_file

SEED = 20261124
CASE_TIMEOUT_S = 30.0
MAX_ERROR_LINES = MAX_PROBLEM_LINES + 1  # the problems shown, then "and N more"
MAX_OUTPUT_CHARS = 200_000
BUILTINS = ("tenancy", "workplace", "community-centre", "boundary-wall")
HUGE_INT = "9" * 5000
BAD_UTF8 = (b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80", b"\xfe\xfe")

PROMEDIATE_CASE: dict[str, Any] = {
    "instruction": "Two hospitals share a pharmacy budget.\n{issues}\n{options}",
    "issues": "1. Formulary status\n2. Term",
    "options": "1. Formulary status:\n(a) Open; (b) Dual; (c) Exclusive\n"
    "2. Term:\n(a) Two-year\n(b) Five-year",
    "config": {"Ana": {"im_threshold": 3.5}, "Ben": {"interrupt_threshold": 2.0}},
    "names": {
        "Ana": "You are Ana, the pharmacy lead.\n## Opinions\n1) Formulary\nFirst choice: a\n"
        "Second choice: b\nUnacceptable: c\n2) Term\nFirst choice: a\nSecond choice: b",
        "Ben": "You are Ben, the finance lead.\n## Opinions\n1) Formulary\nFirst choice: c\n"
        "Second choice: b\n2) Term\nFirst choice: b\nSecond choice: a",
        "Mediator": "You mediate.",
    },
}
PROMEDIATE_TOPICS = {"pm": ["Formulary status", "Contract term"]}
AGENTMEDIATION_CASES: list[dict[str, Any]] = [
    {
        "name": "张某与某装修公司装饰装修合同纠纷调解案.pdf",
        "basic_back": "张某委托某装修公司装修住房，完工后发现墙面开裂，双方就返工费用发生争议。",
        "players": ["装修公司法定代表人", "张某"],
        "player_number": 2,
        "point": "装修公司的施工是否构成违约。",
        "article": ["《中华人民共和国民法典》第577条"],
        "fact": {"facts": [{"来源": "现场勘验", "内容": "客厅墙面有三处裂缝。"}]},
        "retrieve_articles": [],
    },
    {
        "name": "李某与王某房屋租赁合同纠纷调解案",
        "basic_back": "李某租住王某房屋，王某以李某拖欠租金为由要求解除合同，李某要求退还押金。",
        "players": ["李某", "王某"],
        "player_number": 2,
        "point": "押金是否应当退还。",
        "article": ["《中华人民共和国民法典》第722条"],
        "fact": {"facts": [{"来源": "租赁合同", "内容": "月租金二千元，押金四千元。"}]},
    },
]
AGENTMEDIATION_RAW = {
    "filename": "李某与王某房屋租赁合同纠纷调解案.pdf",
    "content": {"关键词": "租赁 房屋租赁合同纠纷", "基本案情": "李某租住王某房屋。"},
}


@dataclass(frozen=True)
class Case:
    """One run of the command line. `files` (path under the case's input folder -> bytes)
    are written first; `argv` may name `{in}` (the input folder) and `{out}` (the --out
    folder). `one_line`: the input has a single fault, so a failure is one error line."""

    name: str
    argv: tuple[str, ...]
    files: dict[str, bytes] = field(default_factory=dict)
    fifo: str | None = None  # a FIFO made at this path under the input folder
    one_line: bool = False
    must_pass: bool = False  # an unmutated input: exit 0
    must_fail: bool = False  # nonsense a parser would accept (issue 46): exit 2
    cwd_files: dict[str, bytes] = field(default_factory=dict)  # in the working folder
    cwd_special: dict[str, str] = field(default_factory=dict)  # fifo, dir, or a device
    store: str | None = None  # "{shared}": a store shared by the kind's cases, holding a run


# --- Mutations ----------------------------------------------------------------------

Data = Any


def _nodes(data: Data, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Data]]:
    yield path, data
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _nodes(v, (*path, i))


def _replace(data: Data, path: tuple[Any, ...], value: Data) -> Data:
    if not path:
        return value
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return data


def _pick(rng: random.Random, data: Data, want: Callable[[tuple[Any, ...], Data], bool]) -> Any:
    found = [p for p, v in _nodes(data) if want(p, v)]
    return rng.choice(found) if found else None


SWAPS: tuple[Data, ...] = ("text", 7, -1, 0, 3.5, True, None, [], {}, ["a", 1], {"k": "v"}, "")


def delete_key(rng: random.Random, data: Data) -> Data:
    path = _pick(rng, data, lambda p, v: bool(p) and isinstance(p[-1], str))
    if path is None:
        return data
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    del parent[path[-1]]
    return data


def swap_type(rng: random.Random, data: Data) -> Data:
    """A random node (the whole document included) as a value of another JSON type."""
    path, old = rng.choice(list(_nodes(data)))
    value = rng.choice([s for s in SWAPS if type(s) is not type(old)])
    return _replace(data, path, copy.deepcopy(value))


def huge_string(rng: random.Random, data: Data) -> Data:
    named = _pick(
        rng, data, lambda p, v: isinstance(v, str) and p[-1:] in (("id",), ("title",), ("name",))
    )
    any_text = _pick(rng, data, lambda p, v: isinstance(v, str))
    path = named if named is not None and rng.random() < 0.6 else any_text
    size = rng.choice((5_000, 100_000, 1_000_000))
    return data if path is None else _replace(data, path, rng.choice("xZ9-某") * size)


def sentinel(name: str) -> Callable[[random.Random, Data], Data]:
    """Put a placeholder at a random node; serialising replaces it with text no Python
    value can be dumped as (a 5,000-digit integer, nesting thousands deep)."""

    def mutate(rng: random.Random, data: Data) -> Data:
        path = _pick(rng, data, lambda p, v: bool(p))
        return data if path is None else _replace(data, path, name)

    return mutate


def nested_within_limit(rng: random.Random, data: Data) -> Data:
    path = _pick(rng, data, lambda p, v: bool(p))
    value: Data = "leaf"
    for _ in range(MAX_DEPTH - 8):
        value = [value] if rng.random() < 0.5 else {"k": value}
    return data if path is None else _replace(data, path, value)


DATA_MUTATIONS: dict[str, Callable[[random.Random, Data], Data]] = {
    "delete_key": delete_key,
    "swap_type": swap_type,
    "huge_string": huge_string,
    "huge_int": sentinel("__HUGE_INT__"),
    "deep": sentinel("__DEEP__"),
    "nested_within_limit": nested_within_limit,
}
# Faults of the file as a whole: a failure says so in exactly one line.
ONE_LINE = frozenset({"huge_int", "deep", "non_utf8", "duplicate_key", "alias_bomb"})


def serialise(data: Data, fmt: str, rng: random.Random) -> bytes:
    if fmt == "yaml":
        text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1000)
    elif fmt == "jsonl":
        text = "\n".join(json.dumps(r, ensure_ascii=False) for r in data) + "\n"
    else:
        text = json.dumps(data, ensure_ascii=False, indent=1)
    n = rng.choice((100, 1_000, 100_000))
    deep = "[" * n + "]" * n
    for placeholder, value in (("__HUGE_INT__", HUGE_INT), ("__DEEP__", deep)):
        text = text.replace(f'"{placeholder}"', value).replace(placeholder, value)
    return text.encode("utf-8")


def byte_flip(rng: random.Random, raw: bytes) -> bytes:
    out = bytearray(raw)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(out))
        out[i] ^= rng.randint(1, 255)
    return bytes(out)


def truncate(rng: random.Random, raw: bytes) -> bytes:
    return raw[: rng.randrange(len(raw))]


def non_utf8(rng: random.Random, raw: bytes) -> bytes:
    i = rng.randrange(len(raw))
    return raw[:i] + rng.choice(BAD_UTF8) + raw[i:]


_YAML_SCALAR_LINE = re.compile(rb"^( *)(- )?([A-Za-z_]+): \S.*$", re.M)
_JSON_SCALAR_LINE = re.compile(rb'^ *"[^"\n]+": ("[^"\n]*"|-?\d+(\.\d+)?|true|false|null),$', re.M)


def duplicate_key(rng: random.Random, raw: bytes) -> bytes:
    """A `key: value` line given twice in the same mapping."""
    json_like = raw.lstrip().startswith((b"{", b"["))
    lines = list((_JSON_SCALAR_LINE if json_like else _YAML_SCALAR_LINE).finditer(raw))
    if not lines:
        return raw
    m = rng.choice(lines)
    line = m.group(0)
    if not json_like and m.group(2):  # '- key: v' opens a list item: repeat it as 'key: v'
        line = m.group(1) + b"  " + line[len(m.group(1)) + 2 :]
    return raw[: m.end()] + b"\n" + line + raw[m.end() :]


BYTE_MUTATIONS: dict[str, Callable[[random.Random, bytes], bytes]] = {
    "byte_flip": byte_flip,
    "truncate": truncate,
    "non_utf8": non_utf8,
    "duplicate_key": duplicate_key,
}

ALIAS_BOMB = "\n".join(
    [f"a0: &a0 [{', '.join(['x'] * 10)}]"]
    + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
).encode()


def mutants(rng: random.Random, data: Data, fmt: str, per_kind: int) -> Iterator[tuple[str, bytes]]:
    """(mutation name, file content) for every mutation, `per_kind` of each."""
    valid = serialise(copy.deepcopy(data), fmt, rng)
    for _ in range(per_kind):
        for kind, mutate in DATA_MUTATIONS.items():
            if fmt == "jsonl":  # one record of the file
                records = copy.deepcopy(data)
                i = rng.randrange(len(records))
                records[i] = mutate(rng, records[i])
                yield kind, serialise(records, fmt, rng)
            else:
                yield kind, serialise(mutate(rng, copy.deepcopy(data)), fmt, rng)
        for kind, mutate_bytes in BYTE_MUTATIONS.items():
            yield kind, mutate_bytes(rng, valid)


# --- Cases --------------------------------------------------------------------------


def _builtin_text(sid: str) -> str:
    return resources.files("disputelab.scenarios").joinpath(f"{sid}.yaml").read_text("utf-8")


def scenario_cases(rng: random.Random) -> list[Case]:
    """Built-in scenarios, mutated, through `scenarios validate` and (some) `run`."""
    cases = []
    for sid in BUILTINS:
        data = yaml.safe_load(_builtin_text(sid))
        for fmt in ("yaml", "json"):
            name = f"case.{fmt}"
            validate = ("scenarios", "validate", f"{{in}}/{name}")
            run = ("run", f"{{in}}/{name}", "--budget", "6")
            valid = {name: serialise(data, fmt, rng)}
            cases.append(Case(f"scenario/{sid}.{fmt}/valid", validate, valid, must_pass=True))
            cases.append(Case(f"scenario/{sid}.{fmt}/run-valid", run, valid, must_pass=True))
            for n, (kind, content) in enumerate(mutants(rng, data, fmt, 2)):
                # `run` reads the file the same way and then plays it: a few of each.
                command = run if n % 9 == 0 else validate
                single = kind in ONE_LINE
                cases.append(
                    Case(
                        f"scenario/{sid}.{fmt}/{kind}#{n}",
                        command,
                        {name: content},
                        one_line=single,
                    )
                )
        bomb = ("scenarios", "validate", "{in}/case.yaml")
        cases.append(
            Case(f"scenario/{sid}/alias_bomb", bomb, {"case.yaml": ALIAS_BOMB}, one_line=True)
        )
    return cases


SPEC: dict[str, Any] = {
    "name": "fuzz",
    "scenarios": ["tenancy", "case.yaml"],
    "conditions": ["general", "posture:competing"],
    "mediators": ["rule"],
    "replicates": 2,
    "budget": 20,
}


def spec_cases(rng: random.Random) -> list[Case]:
    """Specs mutated, and valid specs whose scenario or case files are mutated, through
    `experiment --dry-run`."""
    dry = ("experiment", "{in}/spec.yaml", "--dry-run")
    tenancy = _builtin_text("tenancy").encode()
    pm = json.dumps(PROMEDIATE_CASE).encode()
    cases = [
        Case(
            "spec/valid",
            dry,
            {"spec.yaml": serialise(SPEC, "yaml", rng), "case.yaml": tenancy},
            must_pass=True,
        )
    ]
    for n, (kind, content) in enumerate(mutants(rng, SPEC, "yaml", 4)):
        cases.append(
            Case(
                f"spec/{kind}#{n}",
                dry,
                {"spec.yaml": content, "case.yaml": tenancy},
                one_line=kind in ONE_LINE,
            )
        )
    # The files a valid spec names: a scenario file, and an importer's case file.
    with_pm = {**SPEC, "scenarios": ["case.yaml", "promediate:pm.json"]}
    spec_text = serialise(with_pm, "yaml", rng)
    scenario = yaml.safe_load(_builtin_text("workplace"))
    for n, (kind, content) in enumerate(mutants(rng, scenario, "yaml", 1)):
        files = {"spec.yaml": spec_text, "case.yaml": content, "pm.json": pm}
        cases.append(Case(f"spec-ref/scenario/{kind}#{n}", dry, files))
    for n, (kind, content) in enumerate(mutants(rng, PROMEDIATE_CASE, "json", 1)):
        files = {"spec.yaml": spec_text, "case.yaml": tenancy, "pm.json": content}
        cases.append(Case(f"spec-ref/promediate/{kind}#{n}", dry, files))
    cases.append(Case("spec/alias_bomb", dry, {"spec.yaml": ALIAS_BOMB}, one_line=True))
    return cases


# Source, its case file and content and format, the file beside it and its content.
IMPORTERS: tuple[tuple[str, str, Data, str, str, Data], ...] = (
    ("promediate", "pm.json", PROMEDIATE_CASE, "json", "topics.json", PROMEDIATE_TOPICS),
    (
        "agentmediation",
        "cases.jsonl",
        AGENTMEDIATION_CASES,
        "jsonl",
        "raw.jsonl",
        [AGENTMEDIATION_RAW],
    ),
)
FIELD_SWAPS: tuple[Data, ...] = (1, None, [], {"k": 1}, "text", [1, "a"])


def field_swaps(record: dict[str, Any], optional: tuple[str, ...]) -> Iterator[tuple[str, Data]]:
    """Every top-level field of a case record, and the `optional` ones it leaves out, as
    every other JSON type (the probe's `names: 1` among them)."""
    for key in [*record, *(k for k in optional if k not in record)]:
        for value in FIELD_SWAPS:
            if key not in record or type(value) is not type(record[key]):
                yield key, value


def importer_cases(rng: random.Random) -> list[Case]:
    """Both importers' case files and the files beside them, mutated, through
    `scenarios import`."""
    cases = []
    for source, name, data, fmt, beside, beside_data in IMPORTERS:
        argv = ("scenarios", "import", f"{{in}}/{name}", "--from", source, "--out", "{out}")
        beside_fmt = "jsonl" if beside.endswith(".jsonl") else "json"
        valid, valid_beside = serialise(data, fmt, rng), serialise(beside_data, beside_fmt, rng)
        files = {name: valid, beside: valid_beside}
        cases.append(Case(f"{source}/valid", argv, files, must_pass=True))
        for n, (kind, content) in enumerate(mutants(rng, data, fmt, 4)):
            files = {name: content} | ({beside: valid_beside} if n % 3 == 0 else {})
            single = kind in ONE_LINE and fmt != "jsonl"  # a JSONL fault is one record's
            cases.append(Case(f"{source}/{kind}#{n}", argv, files, one_line=single))
        for n, (kind, content) in enumerate(mutants(rng, beside_data, beside_fmt, 1)):
            files = {name: valid, beside: content}
            cases.append(Case(f"{source}/{beside}/{kind}#{n}", argv, files))
        record = data if fmt == "json" else data[0]
        optional = ("topics",) if source == "promediate" else ()
        for n, (key, value) in enumerate(field_swaps(record, optional)):
            swapped = {**record, key: value}
            content = serialise(swapped if fmt == "json" else [swapped, *data[1:]], fmt, rng)
            cases.append(Case(f"{source}/field:{key}#{n}", argv, {name: content}))
    return cases


# Legal mediation whose expertise condition reads a statute corpus (--corpus PATH).
LEGAL_RUN = (
    *("run", "boundary-wall", "--protocol", "staged", "--rounds", "1"),
    *("--condition", "expertise:ek-top3"),
)


def device_cases() -> list[Case]:
    """Where a file belongs: devices, a FIFO, a folder, /proc, and globs over /dev."""
    cases: list[Case] = []
    for path in (
        "/dev/zero",
        "/dev/null",
        "/dev/urandom",
        "/dev/full",
        "/proc/self/mem",
        "{in}/pipe",
        "{in}",
    ):
        for argv in (
            ("scenarios", "validate", path),
            ("run", path),
            ("experiment", path, "--dry-run"),
            ("scenarios", "import", path, "--from", "promediate", "--out", "{out}"),
            ("scenarios", "import", path, "--from", "agentmediation", "--out", "{out}"),
            (*LEGAL_RUN, "--corpus", path),
        ):
            name = f"device/{argv[0]}:{argv[1]}:{argv[-1]}:{path}"
            cases.append(Case(name, argv, fifo="pipe", one_line=True))
    dry = ("experiment", "{in}/spec.yaml", "--dry-run")
    for ref, single in (
        ("/dev/zero", True),
        ("/dev/*", False),  # /dev/stdout may be a pytest capture file: a real file
        ("/dev/[uz]*", True),
        ("promediate:/dev/zero", True),
        ("agentmediation:/dev/zero", True),
        ("promediate:/dev/[uz]*", True),
        ("pipe", True),
        ("/*/*/*/*/*/*", True),
        ("x" * 5000, True),
        ("y" * 300 + ".yaml", True),
    ):
        spec = yaml.safe_dump({"name": "dev", "scenarios": [ref]}).encode()
        cases.append(
            Case(f"device/spec:{ref[:40]}", dry, {"spec.yaml": spec}, fifo="pipe", one_line=single)
        )
    return cases


# Nonsense that parses (issue 46, item 2): each must be refused, not played in silence.
CONTROL_CHARS = "\x00\x01\x07\x08\x0b\x1b\x7f\x85\x9b"
BAD_TAGS = ("!!binary SGVsbG8=", "!!timestamp 2001-12-14", "!!set {a: null}", "!custom x")


def _strict_scenario(rng: random.Random, kind: str, data: Data) -> bytes:
    """A built-in scenario with one strict fault of `kind`, as JSON or YAML text."""
    if kind == "language":
        data["language"] = rng.choice(("xx", "fr", "de-DE", "EN", "klingon", "zz-Hans"))
    elif kind == "domain":
        data["domain"] = rng.choice(("astrology", "Legal", "b2b", "sports", "x" * 30))
    elif kind in ("control_name", "control_text"):
        want = ("name", "title", "id", "label")
        path = _pick(
            rng,
            data,
            lambda p, v: isinstance(v, str) and (p[-1] in want) == (kind == "control_name"),
        )
        old = _nodes_value(data, path)
        i = rng.randrange(len(old) + 1)
        _replace(data, path, old[:i] + rng.choice(CONTROL_CHARS) + old[i:])
    else:  # a YAML tag
        text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1000)
        return text.replace(f"title: {data['title']}", f"title: {rng.choice(BAD_TAGS)}", 1).encode()
    return json.dumps(data).encode()  # JSON escapes, which YAML reads as the characters


def _nodes_value(data: Data, path: tuple[Any, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


def strict_cases(rng: random.Random) -> list[Case]:
    """Each kind of nonsense, several times over: scenarios, specs and importer records."""
    cases = []
    kinds = ("language", "domain", "control_name", "control_text", "yaml_tag")
    for n in range(8):
        sid = BUILTINS[n % len(BUILTINS)]
        for kind in kinds:
            content = _strict_scenario(rng, kind, yaml.safe_load(_builtin_text(sid)))
            argv = ("scenarios", "validate", "{in}/case.yaml")
            files = {"case.yaml": content}
            cases.append(Case(f"strict/{sid}/{kind}#{n}", argv, files, must_fail=True))
        field_name = rng.choice(("replicates", "base_seed", "concurrency", "limit_scenarios"))
        spec = {**SPEC, field_name: str(rng.randint(1, 5))}
        dry = ("experiment", "{in}/spec.yaml", "--dry-run")
        files = {"spec.yaml": serialise(spec, "yaml", rng), "case.yaml": b""}
        cases.append(Case(f"strict/spec/count_as_text#{n}", dry, files, must_fail=True))
        record = {**AGENTMEDIATION_CASES[0]}
        players = rng.choice((9, 50, 1000))
        record["players"] = [f"当事人{i}" for i in range(players)]
        record["player_number"] = players
        argv = ("scenarios", "import", "{in}/c.jsonl", "--from", "agentmediation", "--out", "{out}")
        files = {"c.jsonl": serialise([record], "jsonl", rng)}
        cases.append(Case(f"strict/agentmediation/players#{n}", argv, files, must_fail=True))
        case = {k: v for k, v in PROMEDIATE_CASE.items() if k != "issues"}
        argv = ("scenarios", "import", "{in}/pm.json", "--from", "promediate", "--out", "{out}")
        files = {"pm.json": serialise(case, "json", rng)}
        cases.append(Case(f"strict/promediate/no_issues#{n}", argv, files, must_fail=True))
    return cases


# --- Inputs added since (issue 46, item 2) -------------------------------------------
# Each kind: PER_KIND generated cases of one fault each, through the command that reads it.

PER_KIND = 300
NASTY: tuple[str, ...] = (
    "",
    " ",
    "\t",
    "\x00",
    "\x1b[31mred",
    "\x7f",
    "a\nb",
    "é",
    "某",
    "🙂",
    "x" * 5000,
    "%s%n",
    "{}",
    "${HOME}",
    "../../etc/passwd",
    "1e309",
    "-1",
    "null",
    "~",
    "[",
    "*a",
    "&a",
    "!!python/object:os.system",
    "<script>alert(1)</script>",
)
TYPE_SWAPS: tuple[Data, ...] = (None, 7, -1, 3.5, True, {}, {"k": "v"}, [], [[]], "text")


def _near_miss(rng: random.Random, word: str) -> str:
    """A word that is almost `word`: another case, a letter changed, added or dropped,
    something glued to it, or a lookalike letter."""
    i = rng.randrange(len(word))
    return rng.choice(
        (
            word.upper(),
            word.title(),
            word[:i] + rng.choice("xq_-0") + word[i + 1 :],
            word[:i] + word[i + 1 :],
            word + rng.choice(("s", "!", ".yaml", "\x00", "\u200b", "/x")),
            rng.choice(("_", "-", ".", "0")) + word,
            word.replace("e", "е").replace("o", "о").replace("a", "а"),  # Cyrillic
        )
    )


def _bad_list(rng: random.Random, valid: list[str]) -> tuple[str, Data]:
    """A list of names (of which `valid` are the known ones) with one fault, and its name."""
    good = rng.sample(valid, rng.randint(1, len(valid)))
    how = rng.choice(("near_miss", "nasty", "repeat", "item_type", "type", "empty", "huge", "deep"))
    if how == "near_miss":
        good[rng.randrange(len(good))] = _near_miss(rng, rng.choice(valid))
        return how, good
    if how == "nasty":
        good.insert(rng.randrange(len(good) + 1), rng.choice(NASTY))
        return how, good
    if how == "repeat":
        return how, [*good, rng.choice(good)]
    if how == "item_type":
        good.insert(rng.randrange(len(good) + 1), rng.choice(TYPE_SWAPS[:-1]))
        return how, good
    if how == "type":
        return how, rng.choice((*TYPE_SWAPS, ", ".join(good), {good[0]: True}))
    if how == "empty":
        return how, []
    if how == "huge":
        return how, [f"{rng.choice(valid)}{i}" for i in range(rng.choice((1_000, 20_000)))]
    nested: Data = good
    for _ in range(rng.choice((2, 50))):
        nested = [nested]
    return how, nested


WORLDS_SPEC: dict[str, Any] = {
    "name": "worlds",
    "scenarios": ["tenancy"],
    "mediators": ["rule"],
    "replicates": 1,
}
WORLD_NAMES = ["shipped", "neutral", "mirrored"]


def worlds_cases(rng: random.Random) -> list[Case]:
    """A spec's `worlds:` axis, each with one fault, through `experiment --dry-run`."""
    dry = ("experiment", "{in}/spec.yaml", "--dry-run")
    valid = serialise({**WORLDS_SPEC, "worlds": WORLD_NAMES}, "yaml", rng)
    cases = [Case("worlds/valid", dry, {"spec.yaml": valid}, must_pass=True)]
    for n in range(PER_KIND):
        how, worlds = _bad_list(rng, WORLD_NAMES)
        spec = serialise({**WORLDS_SPEC, "worlds": worlds}, "yaml", rng)
        wrong = worlds is not None  # `worlds: null` is no worlds axis, as if left out
        cases.append(Case(f"worlds/{how}#{n}", dry, {"spec.yaml": spec}, must_fail=wrong))
    return cases


MODELS_SPEC: dict[str, Any] = {
    "name": "models",
    "scenarios": ["tenancy"],
    "mediators": ["generic"],
    "replicates": 1,
}
# Names that parse and call nothing in a dry run: providers whose key is missing warn.
MODEL_NAMES = ["openai:gpt-4o", "anthropic/claude-3-5", "ollama/llama3", "groq/llama-3.1"]


def models_cases(rng: random.Random) -> list[Case]:
    """Lists in a spec's `models:` (the model axis), each with one fault, through
    `experiment --dry-run`: a seat's list, or a list where a shared role (judge,
    writer) is given one."""
    dry = ("experiment", "{in}/spec.yaml", "--dry-run")
    valid = {**MODELS_SPEC, "models": {"mediator": MODEL_NAMES}}
    cases = [
        Case("models/valid", dry, {"spec.yaml": serialise(valid, "yaml", rng)}, must_pass=True)
    ]
    for n in range(PER_KIND):
        if n % 10 == 0:  # one judge must score every model compared
            role = rng.choice(("judge", "writer"))
            models = {"mediator": MODEL_NAMES[:2], role: MODEL_NAMES[:2]}
            how = f"shared_{role}"
        elif n % 10 == 1:  # more models than the axis takes
            models = {"mediator": [f"openai:m{i}" for i in range(rng.choice((65, 300)))]}
            how = "too_many"
        elif n % 10 == 2:  # names that differ only by endpoint share a label
            models = {
                "mediator": ["openai:m@http://127.0.0.1:9/v1", "openai:m@http://127.0.0.1:9/w"]
            }
            how = "same_label"
        else:
            how, listed = _bad_list(rng, MODEL_NAMES)
            models = {rng.choice(("mediator", "parties")): listed}
        spec = serialise({**MODELS_SPEC, "models": models}, "yaml", rng)
        # A provider takes any model id, so a near miss of one may be another model.
        wrong = how != "near_miss"
        cases.append(
            Case(f"models/{how}#{n}", dry, {"spec.yaml": spec}, one_line=True, must_fail=wrong)
        )
    return cases


# A run that reads a key: the mediator's model needs OPENAI_API_KEY, which the tests
# of these kinds unset, so it is looked up in ./.env.
KEYED_DRY_RUN = ("run", "tenancy", "--mediator", "generic", "--model", "openai:gpt-4o", "--dry-run")
VALID_ENV = (
    b"# keys for the fuzz test\n"
    b"OPENAI_API_KEY=sk-fuzz-0123456789\n"
    b'export ANTHROPIC_API_KEY="sk-ant \\"quoted\\" value"\n'
    b"GROQ_API_KEY='literal $value'  # a comment\n"
)
ENV_LINES = (
    b"NAME",
    b"=value",
    b"1NAME=value",
    b"NA ME=value",
    b"NAME=${OTHER}",
    b'NAME="unterminated',
    b"NAME='unterminated",
    b'NAME="bad \\q escape"',
    b"NAME=value extra words",
    b"export",
    b"export NAME",
    b"OPENAI_API_KEY=again",
    b"sk-pasted-key-on-its-own",
    b"NAME=\x00value",
    b"NAME=\xff\xfe",
    b"[section]",
    b"NAME: value",
    b'NAME="line\nspan"',
    b"\xef\xbb\xbfNAME=bom",
    b"NAME=value\r",
)


def env_cases(rng: random.Random) -> list[Case]:
    """`.env` files with one fault each (a line that does not parse, a name given twice,
    bytes that are not UTF-8, a file too big, or no file at all where it belongs), read
    by a dry run whose model needs a key."""
    cases = [Case("env/valid", KEYED_DRY_RUN, cwd_files={".env": VALID_ENV}, must_pass=True)]
    lines = VALID_ENV.splitlines()
    for n in range(PER_KIND):
        kind = rng.choice(("line", "line", "byte_flip", "truncate", "non_utf8", "huge", "special"))
        env: bytes | None = None
        if kind == "line":
            at = rng.randrange(len(lines) + 1)
            env = b"\n".join([*lines[:at], rng.choice(ENV_LINES), *lines[at:]]) + b"\n"
        elif kind == "huge":
            env = VALID_ENV + b"# " + b"x" * (300 * 1024) + b"\n"
        elif kind != "special":
            env = BYTE_MUTATIONS[kind](rng, VALID_ENV)
        special = rng.choice(("fifo", "dir", "/dev/zero", "/dev/urandom")) if env is None else None
        cases.append(
            Case(
                f"env/{kind}{':' + special if special else ''}#{n}",
                KEYED_DRY_RUN,
                cwd_files={".env": env} if env is not None else {},
                cwd_special={".env": special} if special else {},
                one_line=True,
            )
        )
    return cases


URL_FAULTS = (
    "http://127.0.0.1:99999/v1",
    "http://127.0.0.1:-1/v1",
    "http://999.1.1.1/v1",
    "http://[::1/v1",
    "http://127.0.0.1:9/v1#frag",
    "ftp://127.0.0.1/v1",
    "127.0.0.1:9/v1",
    "http://",
    "http://user:pa ss@127.0.0.1:9/v1",
    "http://127.0.0.1:9/v1?sk=sk-secret",
    "http://exa mple.com/v1",
    "http://\x00host/v1",
    "http://" + "h" * 300 + "/v1",
    "http://127.0.0.1:9/" + "p" * 5000,
    "javascript:alert(1)",
    "",
)


def model_name_cases(rng: random.Random) -> list[Case]:
    """Model names given as `--model`: unknown providers, a provider with no model, a URL
    that is no URL, junk in every part."""
    prefixes = ["openai:", *(f"{p}/" for p in PROVIDERS), "nonesuch/", "openai", "vllm/"]
    cases = [
        Case(
            "model-name/valid",
            (
                "run",
                "tenancy",
                "--mediator",
                "generic",
                "--model",
                "openai:m@http://127.0.0.1:9/v1",
                "--dry-run",
            ),
            must_pass=True,
        )
    ]
    for n in range(PER_KIND):
        how = rng.choice(("unknown", "no_model", "url", "nasty", "near_miss"))
        prefix = rng.choice(prefixes)
        if how == "unknown":
            name = rng.choice(
                ("gpt4", "claude", "nonesuch/x", "openai/", "profile-x", "RULE", "Local")
            )
        elif how == "no_model":
            name = rng.choice(("openai:", *(f"{p}/" for p in PROVIDERS), "vllm/x", "/x", ":"))
        elif how == "url":
            name = f"{prefix.rstrip('/:') + rng.choice(('/', ':'))}m@{rng.choice(URL_FAULTS)}"
        elif how == "nasty":
            name = f"{prefix}{rng.choice(NASTY[1:])}"
        else:
            name = _near_miss(rng, prefix.rstrip("/:")) + rng.choice(("/", ":")) + "m"
        argv = ("run", "tenancy", "--mediator", "generic", "--model", name, "--dry-run")
        cases.append(Case(f"model-name/{how}#{n}", argv, one_line=True))
    return cases


RUN_FILTERS = {
    "--status": ["complete", "partial", "failed", "running"],
    "--kind": ["run", "experiment", "validation"],
}
SINCE_FAULTS = (
    "2026-13-01",
    "2026-02-30",
    "2026-00-10",
    "0000-01-01",
    "10000-01-01",
    "2026-1-1",
    "2026/01/01",
    "01.01.2026",
    "yesterday",
    "2026-01-01T25:00",
    "2026-01-01T12:61",
    "2026-01-01T00:00+25:00",
    "2026-01-01T00:00+99",
    "0001-01-01T00:00+23:59",
    "0001-01-01T00:00-23:59",
    "9999-12-31T23:59:59-23:59",
    "9999-12-31T23:59:59+23:59",
    "２０２６-０１-０１",
    "2026-01-01\x00",
    "1" * 400,
    "-1",
    "",
)


def run_filter_cases(rng: random.Random) -> list[Case]:
    """`runs --since DATE`, `--status` and `--kind` over a store that holds a run; a
    filter that means something lists (exit 0), one that does not fails in one line."""
    store = "{shared}"
    cases = [
        Case("runs-filter/valid", ("runs", "--status", "complete"), store=store, must_pass=True)
    ]
    for n in range(PER_KIND):
        option = rng.choice(("--since", "--since", "--status", "--kind"))
        if option == "--since":
            value = rng.choice(SINCE_FAULTS) if rng.random() < 0.7 else rng.choice(NASTY)
        else:
            value = rng.choice((_near_miss(rng, rng.choice(RUN_FILTERS[option])), *NASTY))
        cases.append(
            Case(
                f"runs-filter/{option[2:]}#{n}", ("runs", option, value), store=store, one_line=True
            )
        )
    return cases


NEW_KINDS: dict[str, Callable[[random.Random], list[Case]]] = {
    "worlds": worlds_cases,
    "models": models_cases,
    "env": env_cases,
    "model-name": model_name_cases,
    "runs-filter": run_filter_cases,
}


def all_cases() -> list[Case]:
    rng = random.Random(SEED)
    return (
        scenario_cases(rng)
        + spec_cases(rng)
        + importer_cases(rng)
        + device_cases()
        + strict_cases(rng)
    )


# --- Running ------------------------------------------------------------------------


@dataclass
class Outcome:
    code: int | None = None
    stdout: str = ""
    stderr: str = ""
    crash: str = ""  # the traceback of an exception that escaped main()


def invoke(argv: list[str]) -> Outcome:
    """`disputelab ARGV` in-process under a watchdog: a hang fails the test, not CI."""
    outcome = Outcome()

    def target() -> None:
        out, err = io.StringIO(), io.StringIO()
        saved = sys.argv
        sys.argv = ["disputelab", *argv]
        try:
            with redirect_stdout(out), redirect_stderr(err):
                main()
        except SystemExit as exc:
            outcome.code = exc.code if isinstance(exc.code, int) else 0
        except BaseException:
            outcome.crash = traceback.format_exc()
        finally:
            sys.argv = saved
            outcome.stdout, outcome.stderr = out.getvalue(), err.getvalue()

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(CASE_TIMEOUT_S)
    if worker.is_alive():
        pytest.fail(f"disputelab {' '.join(a[:80] for a in argv)}: no answer in {CASE_TIMEOUT_S} s")
    return outcome


def snapshot(root: Path, skip: set[str]) -> dict[str, tuple[str, int, int]]:
    """Every entry under `root` but the `skip` folders: kind, size and mtime."""
    seen: dict[str, tuple[str, int, int]] = {}
    for folder, dirs, files in os.walk(root):
        if Path(folder) == root:
            dirs[:] = [d for d in dirs if d not in skip]
        for name in dirs + files:
            st = os.lstat(os.path.join(folder, name))
            kind = "dir" if name in dirs else "file"
            seen[os.path.relpath(os.path.join(folder, name), root)] = (
                kind,
                st.st_size,
                st.st_mtime_ns,
            )
    return seen


def check(case: Case, result: Outcome, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What is wrong with one case's outcome, one line each (empty: all is well)."""
    wrong: list[str] = []
    text = result.stdout + result.stderr
    if result.crash:
        wrong.append(f"an exception escaped: {result.crash.strip().splitlines()[-1]}")
    if "Traceback" in text:
        wrong.append("a traceback was printed")
    if len(text) > MAX_OUTPUT_CHARS:
        wrong.append(f"{len(text):,} characters of output")
    if before != after:
        changed = sorted(set(before.items()) ^ set(after.items()))
        wrong.append(f"wrote outside --store and --out: {changed[:3]}")
    if case.must_pass and result.code != 0:
        wrong.append(f"a valid input failed: {result.stderr.strip()[:300]}")
    if case.must_fail and result.code != 2:
        wrong.append(f"nonsense was accepted (exit {result.code}): {text.strip()[:200]}")
    if result.code not in (0, 2):
        wrong.append(f"exit status {result.code}")
    if result.code == 2:
        lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("error: ")]
        stray = [ln for ln in lines if not ln.startswith(("error: ", "warning: "))]
        too_long = [ln for ln in lines if len(ln) > MAX_LINE_CHARS + len("warning: ")]
        if not errors:
            wrong.append("exit status 2 without an error line")
        if stray:
            wrong.append(f"a stderr line that is not one error or warning: {stray[0][:200]!r}")
        if too_long:
            wrong.append(f"a stderr line of {len(too_long[0]):,} characters")
        if len(errors) > MAX_ERROR_LINES:
            wrong.append(f"{len(errors)} error lines")
        if case.one_line and len(errors) != 1:
            wrong.append(f"a single fault reported in {len(errors)} lines: {errors[:3]}")
    return wrong


def run_case(case: Case, folder: Path, shared: Path | None = None) -> list[str]:
    inputs, store, out = folder / "in", folder / "store", folder / "out"
    inputs.mkdir(parents=True)
    for name, content in case.files.items():
        (inputs / name).write_bytes(content)
    for name, content in case.cwd_files.items():
        (folder / name).write_bytes(content)
    for name, special in case.cwd_special.items():
        if special == "fifo":
            os.mkfifo(folder / name)
        elif special == "dir":
            (folder / name).mkdir()
        else:
            (folder / name).symlink_to(special)
    if case.fifo:
        os.mkfifo(inputs / case.fifo)
    if case.store is not None:
        assert shared is not None, "a case of a shared store needs one"
        store = shared
    argv = [a.replace("{in}", str(inputs)).replace("{out}", str(out)) for a in case.argv]
    before = snapshot(folder, {"store", "out"})
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        result = invoke(["--store", str(store), *argv])
    finally:
        os.chdir(cwd)
    return check(case, result, before, snapshot(folder, {"store", "out"}))


def kind_of(case: Case) -> str:
    return case.name.split("/", 1)[0]


def count_line(cases: list[Case], failures: list[str]) -> str:
    """Cases and problems per input kind, as the test reports them."""
    counts = Counter(kind_of(c) for c in cases)
    wrong = Counter(f.split("/", 1)[0] for f in failures)
    return ", ".join(f"{k} {n} cases ({wrong[k]} wrong)" for k, n in sorted(counts.items()))


CASES = all_cases()


def test_the_generator_is_deterministic_and_big_enough() -> None:
    again = all_cases()
    assert [(c.name, c.argv, c.files) for c in again] == [(c.name, c.argv, c.files) for c in CASES]
    assert len(CASES) >= 300
    strict = Counter(c.name.split("/")[-1].split("#")[0] for c in CASES if c.must_fail)
    assert len(strict) == 8 and min(strict.values()) >= 8, strict
    kinds = {c.name.split("/")[-1].split("#")[0] for c in CASES}
    assert {
        "byte_flip",
        "truncate",
        "delete_key",
        "swap_type",
        "huge_int",
        "deep",
        "huge_string",
        "duplicate_key",
        "non_utf8",
        "alias_bomb",
    } <= kinds


@pytest.fixture
def fuzz_summary(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """Records the test's count of cases per input kind, which tests/conftest.py prints
    in a `fuzz` section at the end of the run."""

    def say(line: str) -> None:
        request.node.user_properties.append(("fuzz", line))

    return say


def test_mangled_and_hostile_inputs_fail_in_one_line_or_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fuzz_summary: Callable[[str], None]
) -> None:
    monkeypatch.delenv("DISPUTELAB_STORE", raising=False)
    # Datasets named without a path (`promediate:`) are looked for here, never in ~/.cache.
    monkeypatch.setenv("DISPUTELAB_DATA", str(tmp_path / "no-datasets"))
    failures = []
    for i, case in enumerate(CASES):
        wrong = run_case(case, tmp_path / f"{i:04d}")
        failures += [f"{case.name}: {w}" for w in wrong]
    fuzz_summary(count_line(CASES, failures))
    assert not failures, f"{len(failures)} problem(s):\n" + "\n".join(failures[:40])


NEW_CASES = {kind: make(random.Random(f"{SEED}-{kind}")) for kind, make in NEW_KINDS.items()}
KEY_VARIABLES = sorted({p.key_env for p in PROVIDERS.values() if p.key_env})


def test_each_new_kind_of_input_has_enough_cases_and_a_valid_one() -> None:
    for kind, cases in NEW_CASES.items():
        assert len(cases) >= PER_KIND + 1, kind
        assert {kind_of(c) for c in cases} == {kind}
        assert sum(c.must_pass for c in cases) >= 1, kind


@pytest.mark.parametrize("kind", sorted(NEW_KINDS))
def test_each_new_kind_of_bad_input_fails_in_one_line(
    kind: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fuzz_summary: Callable[[str], None],
) -> None:
    monkeypatch.delenv("DISPUTELAB_STORE", raising=False)
    monkeypatch.setenv("DISPUTELAB_DATA", str(tmp_path / "no-datasets"))
    for variable in (*KEY_VARIABLES, "OLLAMA_HOST"):  # keys come from the cases' .env
        monkeypatch.delenv(variable, raising=False)
    shared = tmp_path / "shared-store"
    made = invoke(["--store", str(shared), "run", "tenancy", "--mediator", "rule", "--seed", "1"])
    assert made.code == 0, made.stderr
    cases = NEW_CASES[kind]
    failures = []
    for i, case in enumerate(cases):
        wrong = run_case(case, tmp_path / f"{i:04d}", shared)
        failures += [f"{case.name}: {w}" for w in wrong]
    fuzz_summary(count_line(cases, failures))
    assert not failures, f"{len(failures)} problem(s):\n" + "\n".join(failures[:40])


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/null", "/proc/self/mem"])
def test_the_shared_reader_refuses_what_is_not_a_small_regular_file(path: str) -> None:
    with pytest.raises(ValueError) as info:
        read_user_file(path)
    assert "\n" not in str(info.value)


# --- The view server's /compare query string ------------------------------------------

COMPARE_NAMES = ("run", "by", "metric")
QUERY_JUNK = (
    b"%zz",
    b"%",
    b"%%",
    b"%ff%fe",
    b"%00",
    b"%0d%0a",
    b"+",
    b"&&",
    b";",
    b"==",
    b"%u0041",
    b"\xff",
    b"\xc3\x28",
    b"<script>",
    b"%3Cscript%3E",
    b"..%2f..%2f",
)


def _query_value(rng: random.Random, runs: list[str]) -> bytes:
    """A value for a /compare parameter: a run, a prefix, `last`, an arm, or junk."""
    choice = rng.random()
    if choice < 0.3:
        return rng.choice(runs).encode()
    if choice < 0.4:
        return rng.choice((b"last", runs[0][:6].encode(), b"", b"nonesuch"))
    if choice < 0.55:
        return rng.choice((*(b.encode() for b in BY), b"Model", b"runs", b"seat"))
    if choice < 0.8:
        return rng.choice(QUERY_JUNK)
    return quote_bytes(rng.choice(NASTY).encode("utf-8", "surrogatepass"))


def quote_bytes(raw: bytes) -> bytes:
    return quote_from_bytes(raw).encode()


def compare_queries(rng: random.Random, runs: list[str]) -> list[tuple[str, bytes]]:
    """(fault, query string) pairs: PER_KIND with one fault each, then the valid one."""
    queries: list[tuple[str, bytes]] = []
    for n in range(PER_KIND):
        how = rng.choice(("values", "names", "repeated", "many", "long", "shape"))
        pairs = [(b"run", runs[0].encode()), (b"run", runs[1].encode()), (b"by", b"run")]
        if how == "values":
            i = rng.randrange(len(pairs))
            pairs[i] = (pairs[i][0], _query_value(rng, runs))
        elif how == "names":
            name = rng.choice((b"RUN", b"run[]", b"r%75n", b"", b"metric%20", *QUERY_JUNK))
            pairs.insert(rng.randrange(len(pairs) + 1), (name, _query_value(rng, runs)))
        elif how == "repeated":
            name = rng.choice((b"by", b"metric"))
            pairs += [(name, _query_value(rng, runs))] * rng.randint(2, 5)
        elif how == "many":
            pairs += [(b"run", runs[0].encode())] * rng.choice((199, 201, 5000))
        elif how == "long":
            pairs.append((rng.choice(COMPARE_NAMES).encode(), b"x" * rng.choice((5000, 60000))))
        query = b"&".join(k + b"=" + v for k, v in pairs)
        if how == "shape":
            query = rng.choice((b"", b"&", b"run", b"=run", b"run==a", query + b"&", b"&" + query))
        queries.append((f"{how}#{n}", query))
    return [*queries, ("valid", f"run={runs[0]}&run={runs[1]}&by=run".encode())]


def ask(address: tuple[str, int], target: bytes) -> tuple[int, bytes]:
    """A GET of `target` (bytes as sent, however malformed) over a socket: the status
    and body of the answer."""
    with socket.create_connection(address, timeout=CASE_TIMEOUT_S) as conn:
        host = f"{address[0]}:{address[1]}".encode()
        conn.sendall(
            b"GET " + target + b" HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n"
        )
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
    return status, body


def test_compare_queries_of_the_view_server_are_answered_or_refused_with_a_400(
    tmp_path: Path, fuzz_summary: Callable[[str], None]
) -> None:
    store = tmp_path / "store"
    for _ in range(2):  # the same seed twice: two runs whose episodes pair
        made = invoke(
            ["--store", str(store), "run", "tenancy", "--mediator", "rule", "--seed", "1"]
        )
        assert made.code == 0, made.stderr
    opened = api.open_store(store, writable=False)
    runs = [str(r["run_id"]) for r in opened.runs()]
    opened.close()
    queries = compare_queries(random.Random(f"{SEED}-compare"), runs)
    server = ReportServer(store, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    failures = []
    try:
        address = (str(server.server_address[0]), int(server.server_address[1]))
        for name, query in queries:
            status, body = ask(address, b"/compare?" + query)
            if name == "valid" and status != 200:
                failures.append(f"{name}: the valid query was answered {status}: {body[:300]!r}")
            if status not in (200, 400, 414):  # 414: a request line past http.server's cap
                failures.append(f"{name}: status {status} for {query[:80]!r}")
            if b"Traceback" in body:
                failures.append(f"{name}: a traceback in the page")
            if status == 400 and body.count(b"<p>") > 2:
                failures.append(f"{name}: a 400 page of more than one reason: {body[:300]!r}")
        assert ask(address, b"/")[0] == 200, "the server stopped answering"
    finally:
        server.shutdown()
        server.server_close()
    fuzz_summary(f"compare-query {len(queries)} cases ({len(failures)} wrong)")
    assert not failures, f"{len(failures)} problem(s):\n" + "\n".join(failures[:40])
