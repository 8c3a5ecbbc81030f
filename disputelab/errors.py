"""The errors disputelab raises about what it was asked to do.

Every layer raises a typed error that says what is wrong in its own terms (a field of a
scenario file, a parameter of a protocol, a run in the store); none words it as advice
for one front end. `DisputelabError` is their common base, so a notebook can catch one
class, and the command line turns any of them into one line per problem and exit status
2. An error that names what would fix it (`Problem.fixes`) leaves the wording of the fix
to whoever shows it: the command line names its options, the Python API its arguments.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


class DisputelabError(Exception):
    """Something asked of disputelab that cannot be done, as one line per problem.

    `source` names the input the problems are about (a file, a run, a spec); empty when
    the problems name their own place.
    """

    source: str = ""

    def lines(self) -> list[str]:
        """One line per problem: the error's `problems` where it lists them, else the
        lines of its message."""
        listed = getattr(self, "problems", None)
        if isinstance(listed, list) and listed:
            return [str(p) for p in listed]
        text = str(self)
        return [line for line in text.splitlines() if line.strip()] or [text]


@dataclass(frozen=True)
class Problem:
    """One fault of a request, with the inputs that would mend it.

    `fixes` names inputs in the plan's own vocabulary (`model`, `models.parties`,
    `params.budget`, `corpus`): the command line shows them as its options, the API as
    its arguments.
    """

    text: str
    fixes: tuple[str, ...] = ()

    def worded(self, name: dict[str, str] | None = None) -> str:
        """The problem with its fix, each input named through `name` (unnamed inputs
        keep their own names)."""
        if not self.fixes:
            return self.text
        names = [(name or {}).get(f, f) for f in self.fixes]
        verb = "pass" if name else "give"
        return f"{self.text}: {verb} {' or '.join(names)}"


class PlanError(DisputelabError, ValueError):
    """A run or an experiment that cannot be planned: every problem found, at once."""

    def __init__(self, source: str, problems: Sequence[Problem | str]) -> None:
        self.source = source
        self.found = [p if isinstance(p, Problem) else Problem(p) for p in problems]
        self.problems = [p.worded() for p in self.found]
        prefix = f"{source}: " if source else ""
        super().__init__("\n".join(prefix + p for p in self.problems))

    def worded(self, name: dict[str, str]) -> list[str]:
        """Each problem with its fix named through `name` (the command line's options)."""
        return [p.worded(name) for p in self.found]


def first_lines(problems: Iterable[str]) -> list[str]:
    """Each problem's first line: a message of several lines is one problem."""
    return [p.splitlines()[0] if p else "" for p in problems]


class WriteFailed(DisputelabError, OSError):
    """A file could not be written; whatever was at its path before is still there.

    `reason` is short ("the disk is full", "Permission denied") for a one-line error.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: cannot write it ({reason}); the file there is unchanged")
        self.path = path
        self.reason = reason
