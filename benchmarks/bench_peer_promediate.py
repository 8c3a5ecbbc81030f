"""ProMediate's own simulator against disputelab's ProMediate preset, side by side.

The peer is https://github.com/microsoft/ProMediate-Eval; give a clone with `--peer`. The
script copies it into a temporary folder, patches the copy (the steps below; the clone is
only read) and, interleaved over `--rounds`, runs on one stub endpoint (127.0.0.1, a fixed
latency, 200 ms by default; see peer_stub.py):

- *peer*: `--conversations` runs of its `multiparty_conversation_negotiate.py` on the hmo
  case with the social mediator (`--method Social`, its default model), started together,
  each in a process of its own and playing `--turns` turns;
- *disputelab*: `disputelab experiment` with the `promediate` preset on the same case file
  (`cases/hmo.json` of the clone, through the `promediate:` importer), LLM parties and the
  social mediator, `--conversations` replicates of `--turns` dialogue turns each, the
  episodes concurrently.

Each row prints the median wall time with its range, the median peak resident memory of
the whole process tree, the model calls (embeddings included) the stub answered per run,
and the load average the runs started at. Wall time is whole processes, start-up and
teardown included.

What each side does per conversation. The peer, before its first turn, embeds every
sentence of each participant's role text one call at a time (most of its calls); then
every utterance is interpreted (a call), embedded with its interpretation (two calls), and
followed by a next-speaker prediction; after a human's line, its online consensus tracker
(a call) and the social mediator's when-call (a call, and its note embedded), which at
the stub's top rating always steps in: two thoughts, each embedded and rated, and a spoken
line (six calls);
after the mediator's line each of the three humans thinks: two thoughts, two ratings, and
embeddings of the line and the thoughts. The stub's top ratings make both sides' mediators
step in at every chance. disputelab plays the preset's motivated turn-taking and social
mediator with structured replies, and each conversation's unmediated twin too (its
roundtable protocol's design; the twin's calls are in its count); its embeddings go to
the same endpoint.

Usage: python benchmarks/bench_peer_promediate.py --peer PATH [--rounds 3]
       [--conversations 3] [--turns 6] [--latency 0.2]
       [--quick --case-file PATH]   (disputelab's side alone, one round, one conversation)
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from machine import machine_line
from peer_patch import AddFile, PeerMismatch, Replace, Step, describe, patched_copy, refuse
from peer_run import Run, RunFailed, checkout_env, ratio, table, timed
from peer_stub import Stub, peer_stub

CASE = "hmo"
SCRIPT = "multiparty_conversation_negotiate.py"
SHIMS = "bench_shims.py"

# Written into the copy: stand-ins for two packages the peer imports that may be absent
# here. The stub speaks OpenAI's API only, so Claude calls always go through the first.
SHIMS_TEXT = '''"""Written by disputelab's benchmark into its copy of the peer."""
import re
from types import SimpleNamespace

from openai import OpenAI


class _Messages:
    """Anthropic's messages.create, sent to the OpenAI-compatible stub (OPENAI_BASE_URL)."""

    def __init__(self, client):
        self._client = client

    def create(self, model, max_tokens, messages, system="", **_):
        chat = ([{"role": "system", "content": system}] if system else []) + list(messages)
        reply = self._client.chat.completions.create(
            model=model, max_tokens=max_tokens, messages=chat
        )
        return SimpleNamespace(content=[SimpleNamespace(text=reply.choices[0].message.content)])


class _Anthropic:
    def __init__(self, api_key=None, **_):
        self.messages = _Messages(OpenAI(api_key=api_key or "stub"))


anthropic = SimpleNamespace(Anthropic=_Anthropic)


class _Sentences:
    """spaCy's blank pipeline with a sentencizer, reduced to splitting after . ! ?"""

    pipe_names = ["sentencizer"]

    def add_pipe(self, name):
        return None

    def __call__(self, text):
        parts = [p for p in re.split(r"(?<=[.!?])\\s+", text) if p.strip()]
        return SimpleNamespace(sents=[SimpleNamespace(text=p) for p in parts])


def _load(name, **_):
    raise OSError(name)  # no model installed: the peer then takes the blank pipeline


spacy = SimpleNamespace(load=_load, blank=lambda lang: _Sentences())
'''


def peer_steps(turns: int) -> list[Step]:
    return [
        AddFile(SHIMS, SHIMS_TEXT, "stand-ins for anthropic and spaCy, imported below"),
        Replace(
            "thoughtful_agents/utils/llm_api.py",
            "import anthropic\n",
            "from bench_shims import anthropic\n",
            "Claude calls go to the stub through openai's client (the stub speaks OpenAI's API)",
        ),
        Replace(
            "thoughtful_agents/utils/llm_api.py",
            'api_version="2024-12-01-preview",',
            "",
            "OpenAI() takes no api_version (an Azure client's argument): every call raised",
        ),
        Replace(
            "thoughtful_agents/utils/text_splitter.py",
            "import spacy\nfrom spacy.language import Language\n",
            "try:\n    import spacy\nexcept ImportError:  # not installed here\n"
            "    from bench_shims import spacy\n",
            "spaCy may be absent: split role texts into sentences at . ! ? instead",
        ),
        Replace(
            SCRIPT,
            "num_turns = 4*(len(participants)-1)*len(issues[case])",
            f"num_turns = {turns}",
            f"play {turns} turns (the line also indexed the topic list by the case: TypeError)",
        ),
    ]


def peer_commands(copy: Path, conversations: int) -> list[list[str]]:
    return [
        [sys.executable, SCRIPT, "--case", CASE, "--method", "Social", "--id", str(i + 1)]
        for i in range(conversations)
    ]


def fresh_outputs(copy: Path) -> None:
    """The peer skips a conversation whose output exists: each run starts without it."""
    shutil.rmtree(copy / "output", ignore_errors=True)


def finished(copy: Path, conversations: int) -> None:
    """The peer can end a run early without an error: count the summaries it wrote."""
    done = [
        f
        for f in copy.glob("output/*/*/*/conversation.txt")
        if "Conversation Summary" in f.read_text(encoding="utf-8", errors="replace")
    ]
    if len(done) != conversations:
        raise RunFailed(f"the peer finished {len(done)} of {conversations} conversations")


def our_spec(case_file: Path, url: str, conversations: int, turns: int) -> str:
    model = f"openai:stub@{url}"
    return (
        "name: peer-promediate\npreset: promediate\n"
        f'scenarios: ["promediate:{case_file}"]\n'
        "parties: llm\nmediators: [social]\n"
        f"replicates: {conversations}\n"
        f"params: {{budget: {turns}, budget_per_party_topic: 0}}\n"
        f'models: {{parties: "{model}", mediator: "{model}"}}\n'
    )


def ours(work: Path, args: argparse.Namespace, case_file: Path, stub: Stub, n: int) -> Run:
    spec = work / "spec.yaml"
    spec.write_text(our_spec(case_file, stub.url, args.conversations, args.turns))
    store = work / f"store-{n}"
    cmd = [sys.executable, "-m", "disputelab", "--store", str(store), "experiment", str(spec)]
    return timed([cmd], work, checkout_env(OPENAI_API_KEY="stub"), stub)


def measure(args: argparse.Namespace, work: Path, stub: Stub) -> dict[str, list[Run]]:
    rows: dict[str, list[Run]] = {}
    copy = None
    if args.peer is not None:
        copy = patched_copy(args.peer, peer_steps(args.turns), work / "peer")
        case_file = copy / "cases" / f"{CASE}.json"
    else:
        case_file = args.case_file
    if not case_file.is_file():
        raise PeerMismatch(f"{case_file}: no such case file")
    env = checkout_env(OPENAI_BASE_URL=stub.url, OPENAI_API_KEY="stub", CLAUDE_API_KEY="stub")
    for n in range(args.rounds):
        if copy is not None:
            fresh_outputs(copy)
            cmds = peer_commands(copy, args.conversations)
            rows.setdefault("peer (in parallel)", []).append(timed(cmds, copy, env, stub))
            finished(copy, args.conversations)
        rows.setdefault("disputelab (promediate preset)", []).append(
            ours(work, args, case_file, stub, n)
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", type=Path, help="a clone of microsoft/ProMediate-Eval")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--conversations", type=int, default=3, help="conversations a side")
    parser.add_argument("--turns", type=int, default=6, help="turns a conversation")
    parser.add_argument("--latency", type=float, default=0.2, help="stub latency, seconds")
    parser.add_argument("--quick", action="store_true", help="disputelab alone, 1 round")
    parser.add_argument("--case-file", type=Path, help="with --quick: ProMediate's hmo.json")
    parser.add_argument("--list-patches", action="store_true", help="print the patch steps")
    args = parser.parse_args()
    if args.list_patches:
        print("\n".join(describe(peer_steps(args.turns))))
        return
    if args.quick:
        args.rounds, args.conversations, args.peer = 1, 1, None
    if args.peer is None and args.case_file is None:
        refuse("give --peer PATH (a clone of the peer), or --quick with --case-file")
    if min(args.rounds, args.conversations, args.turns) < 1 or args.latency < 0:
        refuse("--rounds, --conversations and --turns must be at least 1, --latency >= 0")
    print(
        machine_line(
            f"{CASE}: {args.conversations} conversations x {args.turns} turns, "
            f"{args.rounds} rounds, stub latency {args.latency} s"
        )
    )
    try:
        with tempfile.TemporaryDirectory() as tmp, peer_stub("promediate", args.latency) as s:
            rows = measure(args, Path(tmp), s)
    except (PeerMismatch, RunFailed) as e:
        refuse(str(e))
    print("\n".join(table(rows)))
    if len(rows) == 2:
        print(ratio(rows, "peer (in parallel)", "disputelab (promediate preset)"))


if __name__ == "__main__":
    main()
