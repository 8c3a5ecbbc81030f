"""The stub endpoint the peer benchmarks share: `disputelab bench`'s load target, answering
each peer the way its code parses replies.

disputelab's requests name a JSON schema, and get the load target's usual reply (a valid
instance of it, every number at the top of its range), except that a self-check finds no
serious problem, as the peer's does. The peers ask for free text or
for JSON described in the prompt; `PeerTarget` answers those:

- AgentMediation (https://github.com/cjj826/AgentMediation) shows a fenced JSON example
  when it wants JSON. The reply is an object with the example's keys, each set to the last
  of the choices the example offers (`a/b/c` gives `c`: "no serious problem" for its
  self-check, so a party's line is checked once) or else to a short sentence. Without an
  example it gets a sentence.
- ProMediate (https://github.com/microsoft/ProMediate-Eval) names the keys it reads in its
  prompts: thoughts get two thoughts, ratings the top of the scale (5.0, as disputelab's
  schemas get), articulations a sentence, its consensus tracker one unresolved issue, its
  next-speaker prediction `anyone`; anything else (an interpretation) a sentence.

Embeddings requests get the load target's hashed vectors. Every call, embeddings too,
waits the same fixed latency. Run as `python benchmarks/peer_stub.py STYLE LATENCY_S`: it
prints its URL and serves until standard input closes; `peer_stub()` does that for a
benchmark and reads the server's request count (`Stub.requests`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import disputelab
from disputelab.llm.load_settings import TargetSettings
from disputelab.llm.load_target import LoadTarget, prompt_text, serve

STYLES = ("agentmediation", "promediate")
CHECKOUT = Path(disputelab.__file__).resolve().parents[1]  # the disputelab this runs
FENCED_JSON = re.compile(r"```json(.*?)```", re.DOTALL)
EXAMPLE_KEY = re.compile(r'"([^"\n]+)"\s*:\s*(?:"([^"\n]*)")?')


def sentence(number: int) -> str:
    return f"I could move on the amount if the payment came within {number % 28 + 2} days."


def agentmediation_reply(prompt: str, number: int) -> str:
    """JSON in a fence, shaped like the prompt's last fenced example; else a sentence."""
    examples = FENCED_JSON.findall(prompt)
    if not examples:
        return sentence(number)
    answer: dict[str, str] = {}
    for key, value in EXAMPLE_KEY.findall(examples[-1]):
        answer[key] = value.split("/")[-1] if "/" in value else sentence(number)
    return "```json\n" + json.dumps(answer, ensure_ascii=False) + "\n```"


def promediate_reply(prompt: str, number: int) -> str:
    """The object the prompt's named keys ask for; `anyone` to a next-speaker question."""
    said = sentence(number)
    if '"thoughts"' in prompt:
        thought = {"persona": "3", "content": said, "stimuli": []}
        return json.dumps({"thoughts": [thought, thought]})
    if '"articulation"' in prompt:
        return json.dumps({"articulation": said})
    if '"mind_state"' in prompt:
        issue = {"label": "unresolved", "mind_state": {}, "conclusion": said}
        return json.dumps({"open issues": issue})
    if '"conclusion"' in prompt:
        return json.dumps({"conclusion": said})
    if '"rating"' in prompt:
        return json.dumps({"reasoning": said, "rating": 5.0, "should_engage": True})
    if '"anyone"' in prompt:
        return "anyone"
    return said


REPLIES: dict[str, Callable[[str, int], str]] = {
    "agentmediation": agentmediation_reply,
    "promediate": promediate_reply,
}


class PeerTarget(LoadTarget):
    """The load target, answering requests that name no schema as `style`'s peer parses."""

    def __init__(self, settings: TargetSettings, style: str) -> None:
        super().__init__(settings)
        self.style = style

    def content(self, body: dict[str, Any], number: int) -> str:
        if (body.get("response_format") or {}).get("type") == "json_schema":
            return passed_check(super().content(body, number))
        return REPLIES[self.style](prompt_text(body), number)


def passed_check(content: str) -> str:
    """disputelab's reply with a self-check's verdict set to "no serious problem": the
    load target fills every boolean true, which would have disputelab's parties revise
    every line three times while the peer's, answered with its example's last choice,
    pass theirs. So both sides check each line once."""
    reply = json.loads(content)
    if isinstance(reply, dict) and "serious_problem" in reply:
        reply.update(serious_problem=False, revised="")
        return json.dumps(reply)
    return content


@dataclass(frozen=True)
class Stub:
    """A running stub: its base URL, and how many requests it has answered so far."""

    url: str

    def requests(self) -> int:
        with urllib.request.urlopen(self.url.removesuffix("/v1") + "/stats", timeout=30) as r:
            return int(json.load(r)["requests"])


@contextmanager
def peer_stub(style: str, latency_s: float) -> Iterator[Stub]:
    """The stub in a process of its own, so that its CPU is not the benchmark's."""
    proc = subprocess.Popen(
        [sys.executable, __file__, style, str(latency_s)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(CHECKOUT)},
    )
    assert proc.stdout is not None and proc.stdin is not None
    url = proc.stdout.readline().strip()
    try:
        if not url.startswith("http"):
            raise RuntimeError("the stub endpoint did not start")
        yield Stub(url)
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    settings = TargetSettings(latency_s=float(sys.argv[2]))
    serve(settings, PeerTarget(settings, sys.argv[1]))
