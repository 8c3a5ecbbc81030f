"""A hosted study: N participants over M scenarios, each person one episode at one seat
with agents elsewhere, assigned balanced before anyone joins and recorded, all served
by one `disputelab host STUDY.yaml`.

    study: pilot                    # its name: the assignment is recorded under it
    scenarios: [tenancy, workplace] # built-in ids, imported ids or files beside this one
    seat: parties                   # every party seat in turn; or mediator, or parties:ID
    participants: 6
    seed: 0                         # the assignment's draw; episode k plays seed + k
    mediator: rule                  # and any run option: protocol, preset, parties,
    budget: 12                      #   model, condition, params
    consent: Text of the consent page.
    questionnaire: [{key: trust, text: I trusted the mediator.}]
    expires: 120                    # minutes each link stays valid
    turn_seconds: 90                # a move's time before the seat's default move; 0: none

    from disputelab.api.study import host_study, new_study, read_study
    tables, links = new_study(read_study("pilot.yaml"), store="runs")
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from disputelab.errors import DisputelabError
from disputelab.scenario.io import describe_validation_error
from disputelab.scenario.schema import Scenario
from disputelab.web.app import DEFAULT_CONSENT, Ended, Table, tables_app
from disputelab.web.people import DEFAULT_ITEMS, Item
from disputelab.web.serving import invite_links, serve_until
from disputelab.web.study import Slot, balanced_slots, record_assignments, record_ended

__all__ = ["StudyError", "StudySpec", "host_study", "is_study_file", "new_study", "read_study"]

_WEEK_MINUTES = 7 * 24 * 60


class StudyError(DisputelabError, ValueError):
    """A study file that cannot be read or run."""


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str = Field(min_length=1)
    text: str = Field(min_length=1)


class StudySpec(BaseModel):
    """What a study file says; `base` is the folder its scenario files are found in."""

    model_config = ConfigDict(extra="forbid")

    study: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    scenarios: list[str] = Field(min_length=1)
    seat: str = "parties"
    participants: int = Field(ge=1, le=1000)
    seed: int = Field(default=0, ge=0)
    consent: str = DEFAULT_CONSENT
    questionnaire: list[_Item] | None = Field(default=None, min_length=1)
    expires: float = Field(default=120.0, gt=0, le=_WEEK_MINUTES)
    turn_seconds: float = Field(default=0.0, ge=0, le=24 * 3600)  # 0: no deadline
    protocol: str | None = None
    preset: str | None = None
    mediator: str | None = None
    parties: str | None = None
    model: str | None = None
    condition: str = "general"
    budget: int | None = Field(default=None, ge=1)
    params: dict[str, Any] = Field(default_factory=dict)
    base: Path = Path(".")

    def items(self) -> tuple[Item, ...]:
        if self.questionnaire is None:
            return DEFAULT_ITEMS
        return tuple(Item(i.key.strip(), i.text.strip()) for i in self.questionnaire)

    def run_options(self) -> dict[str, Any]:
        """The options each episode is played with, as `play` takes them."""
        from disputelab.api import RULE

        return dict(
            protocol=self.protocol,
            preset=self.preset,
            mediator=self.mediator,
            parties=self.parties,
            model=self.model or RULE,
            condition=self.condition,
            params=self.params,
            budget=self.budget,
        )


def is_study_file(ref: str) -> bool:
    """Whether `ref` is a study file (a YAML mapping with `study:`), not a scenario."""
    path = Path(ref)
    if path.suffix.lower() not in (".yaml", ".yml") or not path.is_file():
        return False
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False  # the scenario loader says what is wrong with it
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:  # broken: a study if it says so, and `read_study` says where
        return re.search(r"^study\s*:", text, re.MULTILINE) is not None
    return isinstance(data, dict) and "study" in data


def read_study(path: str | os.PathLike[str]) -> StudySpec:
    """The study of a YAML file; StudyError (one line) for anything it cannot take."""
    where = Path(path)
    try:
        data = yaml.safe_load(where.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise StudyError(f"{where}: cannot read the study ({exc})".splitlines()[0]) from None
    if not isinstance(data, dict):
        raise StudyError(f"{where}: a study is a mapping with study, scenarios, participants")
    if "base" in data:
        raise StudyError(f"{where}: base: unknown field; remove it or check its spelling")
    try:
        return StudySpec.model_validate({**data, "base": where.resolve().parent})
    except ValidationError as exc:
        raise StudyError(f"{where}: {describe_validation_error(exc)[0]}") from None


def _scenario(spec: StudySpec, ref: str, library: Path) -> tuple[str | Path, Scenario]:
    """The reference to play (a file beside the study, or the id) and its scenario."""
    from disputelab.scenario.library import resolve_scenario

    beside = spec.base / ref
    played: str | Path = beside if beside.is_file() else ref
    return played, resolve_scenario(str(played), library)


def _seats(spec: StudySpec, scenario: Scenario) -> list[str]:
    """The seats a participant may be given in `scenario`: every party seat for
    `parties`, else the one seat named."""
    if spec.seat.strip() in ("parties", "party"):
        return [f"parties:{p.id}" for p in scenario.parties]
    return [spec.seat.strip()]


def _recorded(
    table: Table, root: Path, study: str, participant: str
) -> Callable[[Mapping[str, Any]], Any]:
    """The table's episode, its slot's row naming the episode once it has ended."""
    play = table.episode

    async def episode(sources: Mapping[str, Any]) -> Ended:
        ended = await play(sources)
        record_ended(root, study, participant, ended.run_id, ended.episode_id, ended.stop_reason)
        return ended

    return episode


def new_study(spec: StudySpec, *, store: Any = None) -> tuple[list[Table], dict[str, str]]:
    """One table per participant, assigned and recorded; each link's key names its
    position, scenario and seat, its value the token (shown only here)."""
    from disputelab.api import open_store
    from disputelab.api.host import new_table

    root = Path(open_store(store).root)
    library = root / "library"
    found = {ref: _scenario(spec, ref, library) for ref in dict.fromkeys(spec.scenarios)}
    seats = {ref: _seats(spec, sc) for ref, (_, sc) in found.items()}
    slots = balanced_slots(seats, spec.participants, spec.seed)
    tables: list[Table] = []
    tokens: dict[str, str] = {}
    rows: list[tuple[Slot, str]] = []
    for slot in slots:
        table, token = new_table(
            found[slot.scenario][0], seats=[slot.seat], store=root, expires=spec.expires,
            consent=spec.consent, items=spec.items(), seed=slot.seed,
            turn_seconds=spec.turn_seconds, **spec.run_options(),
        )  # fmt: skip
        participant = table.invites[slot.seat].participant
        table.episode = _recorded(table, root, spec.study, participant)
        tables.append(table)
        rows.append((slot, participant))
        tokens[f"participant {slot.position} ({slot.scenario}, {slot.seat})"] = token[slot.seat]
    record_assignments(root, spec.study, rows)
    return tables, tokens


def host_study(
    tables: Sequence[Table],
    tokens: Mapping[str, str],
    *,
    bind: str = "127.0.0.1",
    port: int = 8765,
    on_ready: Callable[[dict[str, str]], None] | None = None,
) -> list[Table]:
    """Serve every table of a study at once until each person has answered the
    questionnaire (or Ctrl-C); `on_ready` hears the links once the server listens."""
    serve_until(
        tables_app(tables),
        bind=bind,
        port=port,
        links=invite_links(bind, port, "s", tokens),
        finished=lambda: all(t.finished() for t in tables),
        poll_s=0.2,
        on_ready=on_ready,
    )
    return list(tables)
