"""SoCRATES's released scenarios (Hugging Face `DISLab/SoCRATES`, folder `scenarios/`),
read from a copy a user has on disk: one JSON file per scenario.

Written without the released files, and unverified until they are available. The paper
("SoCRATES: Towards Reliable Automated Evaluation of Proactive LLM Mediation across
Domains and Socio-cognitive Variations", https://arxiv.org/abs/2606.05563, its Table 13)
describes each scenario's fields, but the released files could not be read when this was
written, so the key names below are our reading of that description, each with the
spellings a JSON export would likely use; the tests read files we wrote in that shape.
Expect to adjust this once the real files can be read:

```
{"title": ..., "domain": ..., "background": ...,
 "topics": [{"code": "ACC", "name": ..., "options": {"A": "...", "B": "..."}}, ...],
 "parties": [{"abbreviation": "RHN", "name": "Regional Health Network",
              "brief": "You are ...", "weights": {"ACC": 40, ...},
              "stances": {"ACC": "A", ...}}, ...]}
```

`options` may also be a list of `{"label": "A", "text": ...}`. What the files do not give
is assumed and said in the scenario's `assumptions`: a party's ranking past its starting
stance (nearer options in the list first, as the options run from most to least
generous), and its fallback (no agreement, utility 0.3, as for ProMediate's cases).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from disputelab.errors import DisputelabError
from disputelab.scenario.inputs import MAX_DATASET_BYTES, load_json, read_user_file
from disputelab.scenario.schema import (
    DOMAINS,
    Fallback,
    Option,
    Party,
    Scenario,
    Topic,
    TopicPreference,
)

FALLBACK_UTILITY = 0.3


class SocratesError(DisputelabError, ValueError):
    """A scenario file that cannot be read; the message names the field."""


def _first(d: dict[str, Any], keys: tuple[str, ...], where: str) -> Any:
    for k in keys:
        if k in d:
            return d[k]
    raise SocratesError(f"{where}: missing {keys[0]!r}")


def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.\-]+", "-", text).strip("-.").lower()
    return slug or "x"


def _options(raw: Any, where: str) -> list[Option]:
    if isinstance(raw, dict):
        pairs = [(str(k), str(v)) for k, v in raw.items()]
    elif isinstance(raw, list):
        pairs = []
        for i, o in enumerate(raw):
            if not isinstance(o, dict):
                raise SocratesError(f"{where}.options[{i}]: must be a mapping")
            pairs.append(
                (
                    str(_first(o, ("label", "id", "letter"), f"{where}.options[{i}]")),
                    str(_first(o, ("text", "description", "content"), f"{where}.options[{i}]")),
                )
            )
    else:
        raise SocratesError(f"{where}.options: must be a mapping of letters or a list")
    # "(A)" and "A)" are the same option letter.
    return [Option(id=k.strip("() "), label=v) for k, v in pairs]


def _topics(data: dict[str, Any]) -> list[Topic]:
    raw = _first(data, ("topics", "issues"), "scenario")
    if not isinstance(raw, list) or not raw:
        raise SocratesError("topics: must be a non-empty list")
    out = []
    for i, t in enumerate(raw):
        where = f"topics[{i}]"
        if not isinstance(t, dict):
            raise SocratesError(f"{where}: must be a mapping")
        code = str(_first(t, ("code", "id"), where))
        name = str(t.get("name") or t.get("title") or code)
        out.append(
            Topic(id=code, name=name, options=_options(_first(t, ("options",), where), where))
        )
    return out


def ranking_from(stance: str, options: list[str]) -> list[str]:
    """The stance first, then the other options nearest to it in the list first (the
    options run from most to least generous), ties to the earlier one."""
    at = options.index(stance)
    return sorted(options, key=lambda o: (abs(options.index(o) - at), options.index(o)))


def _party(raw: Any, i: int, topics: list[Topic]) -> Party:
    where = f"parties[{i}]"
    if not isinstance(raw, dict):
        raise SocratesError(f"{where}: must be a mapping")
    short = str(raw.get("abbreviation") or raw.get("id") or _first(raw, ("name",), where))
    weights = _first(raw, ("weights", "preference_weights"), where)
    stances = _first(raw, ("stances", "starting_stances"), where)
    prefs = {}
    for t in topics:
        stance = str(stances.get(t.id, "")).strip("() ")
        if stance not in t.option_ids():
            raise SocratesError(
                f"{where}.stances.{t.id}: {stance!r} is not one of {t.option_ids()}"
            )
        prefs[t.id] = TopicPreference(ranking=ranking_from(stance, t.option_ids()))
    return Party(
        id=_slug(short),
        name=str(raw.get("name") or short),
        role=short,
        objective=str(_first(raw, ("brief", "profile", "role_brief"), where)),
        fallback=Fallback(description="No agreement is reached.", utility=FALLBACK_UTILITY),
        preferences=prefs,
        weights={str(k): int(v) for k, v in weights.items()},
    )


def _domain(given: object) -> tuple[str, list[str]]:
    """The scenario's domain, and the assumption made when the file names none known."""
    name = str(given or "general").strip().lower().replace(" ", "-")
    if name in DOMAINS:
        return name, []
    return "general", [f"domain: {str(given)[:40]!r} is none of {', '.join(DOMAINS)}; general"]


def import_socrates_file(path: Path) -> Scenario:
    """One SoCRATES scenario file as a Scenario (ids from the file name)."""
    data = load_json(read_user_file(path, MAX_DATASET_BYTES, "a SoCRATES scenario (.json)"))
    if not isinstance(data, dict):
        raise SocratesError("must hold one scenario (a JSON object)")
    topics = _topics(data)
    parties = _first(data, ("parties",), "scenario")
    if not isinstance(parties, list) or len(parties) < 2:
        raise SocratesError("parties: must list at least two parties")
    domain, domain_note = _domain(data.get("domain"))
    return Scenario(
        id=f"socrates-{_slug(path.stem)}",
        title=str(_first(data, ("title",), "scenario")),
        domain=domain,
        background=str(_first(data, ("background",), "scenario")),
        parties=[_party(p, i, topics) for i, p in enumerate(parties)],
        topics=topics,
        assumptions=[
            "rankings past each party's starting stance: the nearer options first",
            f"fallbacks: no agreement, utility {FALLBACK_UTILITY} (the file gives none)",
            *domain_note,
        ],
    )
