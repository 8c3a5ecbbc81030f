"""AgentMediation's own code against disputelab on the same cases, side by side.

The peer is https://github.com/cjj826/AgentMediation; give a clone with `--peer`. The
script copies it into a temporary folder, patches the copy (the steps below; the clone is
only read) and, interleaved over `--rounds`, runs on one stub endpoint (127.0.0.1, a fixed
latency, 200 ms by default; see peer_stub.py):

- *peer*: the peer's `run.py --multi --baseline` on the first `--cases` cases of its
  `data/case_back.json` (one worker process per case, as its `--multi` does);
- *peer without its sleep*: the same with the fixed 0.5 s pause it takes after every
  bargaining step removed;
- *disputelab*: `disputelab experiment` on the same cases (those lines of the same file,
  through the `agentmediation:` importer), protocol `staged` with the `agentmediation`
  preset, LLM parties and mediator, the episodes concurrently.

Each row prints the median wall time with its range, the median peak resident memory of
the whole process tree, the model calls the stub answered per run, and the load average
the runs started at. Wall time is whole processes, start-up and teardown included.

Per case with N parties the peer makes 8 + 19N calls when every self-check passes, as the
stub's replies make it: the mediator's opening and each party's statement and its
conditions note (1 + 2N), the first proposal (1), 5 bargaining rounds of the mediator's
line (1) and each party's line, self-check and conditions note (3N), the closing proposal
(1), and each party's acceptance and satisfaction (2N); it sleeps 0.5 s after each of the
5(N + 1) bargaining steps. disputelab plays the same stages under the preset (statements,
proposal, 5 rounds, closure, two verdict calls a party, a self-check and a conditions note
a party turn), with structured replies; its per-case count is in the calls column. The
stub's replies make every self-check pass on both sides, so neither revises a line.

What the patch steps change in the copy, and why: `--list-patches`.

Usage: python benchmarks/bench_peer_agentmediation.py --peer PATH [--rounds 3] [--cases 8]
       [--latency 0.2] [--quick]   (--quick: disputelab's side alone, one round, 2 cases)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from machine import machine_line
from peer_patch import (
    CopyIfMissing,
    PeerMismatch,
    Replace,
    ReplacePattern,
    Step,
    describe,
    guarded_import,
    patched_copy,
    refuse,
)
from peer_run import Run, RunFailed, checkout_env, ratio, table, timed
from peer_stub import Stub, peer_stub

CASES_FILE = "data/case_back.json"
PEER_MODEL = "gpt-stub"  # the peer routes model names containing "gpt" to its OpenAI client


def peer_steps(cases: int) -> list[Step]:
    return [
        CopyIfMissing("src/chat-no-key.py", "src/chat.py", "the README's setup: copy the template"),
        ReplacePattern(
            "src/chat.py",
            r"""base_url\s*=\s*(["'])[^"'\n]*\1""",
            'base_url=__import__("os").environ["OPENAI_BASE_URL"]',
            "point the client at the stub endpoint (whatever URL the template or user put)",
        ),
        Replace(
            "src/chat.py",
            "from zhipuai import ZhipuAI",
            guarded_import("from zhipuai import ZhipuAI", "ZhipuAI", "only glm models use it"),
            "zhipuai may be absent; only its glm branch needs it",
        ),
        Replace(
            "src/chat.py",
            "import httpx",
            guarded_import("import httpx", "httpx", "imported, never used"),
            "httpx may be absent (an openai client without it); the peer never uses it",
        ),
        *[
            Replace(
                "src/utils.py",
                line,
                guarded_import(line, names, "only the sequential mode's transcript uses it"),
                "python-docx may be absent (the requirements omit it); --multi never uses it",
            )
            for line, names in (
                ("from docx import Document", "Document"),
                ("from docx.shared import Pt", "Pt"),
                ("from docx.oxml.ns import qn", "qn"),
            )
        ],
        *[
            Replace(
                path,
                quote + "\\n" + quote + ".join(",
                "chr(10).join(",
                "a backslash inside an f-string's braces needs Python 3.12",
                optional=True,
            )
            for path in ("src/agent.py", "src/mediator.py")
            for quote in ("'", '"')
        ],
        Replace(
            "run.py",
            "open('./data/case_back.json', 'r').readlines()",
            f"open('./data/case_back.json', 'r').readlines()[:{cases}]",
            f"run the first {cases} cases, not all 330",
        ),
    ]


NO_SLEEP = Replace(
    "src/arena.py",
    "time.sleep(0.5)",
    "time.sleep(0)",
    "the variant without the fixed pause after every bargaining step",
)


def peer_command(copy: Path) -> list[str]:
    args = ["--model_name", PEER_MODEL, "--baseline", "--multi", "--date", "bench"]
    return [sys.executable, str(copy / "run.py"), *args]


def fresh_outputs(copy: Path) -> None:
    """The peer skips cases whose output file exists: each run starts without them."""
    for old in [*copy.glob("output_*"), *copy.glob("test_*")]:
        for f in sorted(old.rglob("*"), reverse=True):
            f.rmdir() if f.is_dir() else f.unlink()
        old.rmdir()


def finished(copy: Path, cases: int) -> None:
    """The peer reports a case that failed and exits 0: count the cases it wrote."""
    done = len(list(copy.glob("output_bench/temp_*/*.json")))
    if done != cases:
        raise RunFailed(f"the peer finished {done} of {cases} cases (its log is not kept)")


def our_spec(cases_file: Path, url: str) -> str:
    model = f"openai:stub@{url}"
    return (
        "name: peer-agentmediation\npreset: agentmediation\n"
        f'scenarios: ["agentmediation:{cases_file}"]\n'
        "parties: llm\nmediators: [llm]\nreplicates: 1\n"
        f'models: {{parties: "{model}", mediator: "{model}"}}\n'
    )


def ours(work: Path, cases_file: Path, stub: Stub, n: int) -> Run:
    """One disputelab run into a fresh store."""
    spec = work / "spec.yaml"
    spec.write_text(our_spec(cases_file, stub.url))
    store = work / f"store-{n}"
    cmd = [sys.executable, "-m", "disputelab", "--store", str(store), "experiment", str(spec)]
    return timed([cmd], work, checkout_env(OPENAI_API_KEY="stub"), stub)


def first_cases(source: Path, count: int, into: Path) -> Path:
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)[:count]
    if len(lines) < count:
        raise PeerMismatch(f"{source}: has {len(lines)} cases, fewer than {count}")
    into.write_text("".join(lines), encoding="utf-8")
    return into


def measure(args: argparse.Namespace, work: Path, stub: Stub) -> dict[str, list[Run]]:
    rows: dict[str, list[Run]] = {}
    variants: dict[str, Path] = {}
    if args.peer is not None:
        steps = peer_steps(args.cases)
        variants["peer"] = patched_copy(args.peer, steps, work / "peer")
        variants["peer without its 0.5 s sleep"] = patched_copy(
            args.peer, [*steps, NO_SLEEP], work / "peer-no-sleep"
        )
        source = args.peer / CASES_FILE
    else:
        source = args.cases_file
    cases = first_cases(source, args.cases, work / "cases.jsonl")
    env = checkout_env(OPENAI_BASE_URL=stub.url, OPENAI_API_KEY="stub", MPLBACKEND="Agg")
    for n in range(args.rounds):
        for name, copy in variants.items():
            fresh_outputs(copy)
            rows.setdefault(name, []).append(timed([peer_command(copy)], copy, env, stub))
            finished(copy, args.cases)
        rows.setdefault("disputelab (staged, agentmediation)", []).append(
            ours(work, cases, stub, n)
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", type=Path, help="a clone of cjj826/AgentMediation")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--cases", type=int, default=8, help="cases each side plays")
    parser.add_argument("--latency", type=float, default=0.2, help="stub latency, seconds")
    parser.add_argument("--quick", action="store_true", help="disputelab alone, 1 round, 2 cases")
    parser.add_argument("--cases-file", type=Path, help="with --quick: the cases (JSONL)")
    parser.add_argument("--list-patches", action="store_true", help="print the patch steps")
    args = parser.parse_args()
    if args.list_patches:
        print("\n".join(describe([*peer_steps(args.cases), NO_SLEEP])))
        return
    if args.quick:
        args.rounds, args.cases, args.peer = 1, min(args.cases, 2), None
    if args.peer is None and args.cases_file is None:
        refuse("give --peer PATH (a clone of the peer), or --quick with --cases-file")
    if args.rounds < 1 or args.cases < 1 or args.latency < 0:
        refuse("--rounds and --cases must be at least 1, --latency not negative")
    print(machine_line(f"{args.cases} cases, {args.rounds} rounds, stub latency {args.latency} s"))
    try:
        with tempfile.TemporaryDirectory() as tmp, peer_stub("agentmediation", args.latency) as s:
            rows = measure(args, Path(tmp), s)
    except (PeerMismatch, RunFailed) as e:
        refuse(str(e))
    print("\n".join(table(rows)))
    if "peer" in rows:
        ours_name = next(n for n in rows if n.startswith("disputelab"))
        print(ratio(rows, "peer", ours_name))
        print(ratio(rows, "peer without its 0.5 s sleep", ours_name))


if __name__ == "__main__":
    main()
