"""People in the loop: a person takes a seat of any protocol through a `MoveSource`.

The face of the package, for protocols registering their human kinds and for front ends
(the terminal's `TerminalMoves`, a web page's source) that host a person's seat:

- `SeatPrompt`, its fields (`TextField`, `PickField`, `AmountField`) and `Move`: what a
  person is shown and answers (`prompt.py`);
- `validate`, `parse`, `MoveError`: the one place moves are checked (`moves.py`);
- `MoveSource` and `LoggedMoves`: where moves come from, and the log a resumed episode
  replays (`source.py`);
- `HumanSeat`, `human_kind`, `human_party_kind`, `no_human_seat`: what a protocol's
  adapter builds on (`seat.py`, `kinds.py`).
"""

from disputelab.humans.kinds import (
    HumanSeatError,
    human_kind,
    human_party_kind,
    no_human_seat,
    no_human_seats,
    source_for,
)
from disputelab.humans.moves import MoveError, check, field_help, parse, validate
from disputelab.humans.parties import HumanParty, party_brief
from disputelab.humans.prompt import (
    AmountField,
    Field,
    Line,
    Move,
    Needs,
    Option,
    PickField,
    SeatPrompt,
    SeatRef,
    TextField,
    Value,
)
from disputelab.humans.seat import HUMAN, HumanSeat, package_words, public_block, topic_options
from disputelab.humans.source import Listens, Logged, LoggedMoves, MoveSource, read_log

__all__ = [
    "HUMAN",
    "AmountField",
    "Field",
    "HumanParty",
    "HumanSeat",
    "HumanSeatError",
    "Line",
    "Listens",
    "Logged",
    "LoggedMoves",
    "Move",
    "MoveError",
    "MoveSource",
    "Needs",
    "Option",
    "PickField",
    "SeatPrompt",
    "SeatRef",
    "TextField",
    "Value",
    "check",
    "field_help",
    "human_kind",
    "human_party_kind",
    "no_human_seat",
    "no_human_seats",
    "package_words",
    "parse",
    "party_brief",
    "public_block",
    "read_log",
    "source_for",
    "topic_options",
    "validate",
]
