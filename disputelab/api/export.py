"""A run as tidy tables for analysis elsewhere: `tables(run)` gives the episodes (one
row each, a column per metric), the turns (speaker, the seat's kind, a person's
pseudonymous id, timings, tokens), the actions (each stance, accepted option, amount,
clause or verdict of a move in a row of its own), the questionnaire answers, the moves
a hosted turn's deadline made for a person (`defaults`) and the annotation labels;
`write_tables(run, folder)` writes each as `folder/NAME.parquet`.

    from disputelab.api.export import tables
    turns = tables("last")["turns"]
    turns.groupby("seat").latency_s.median()
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from disputelab.report.tidy import ACTION_COLUMNS, TURN_COLUMNS, run_tables

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TABLES", "tables", "write_tables"]

TABLES = ("episodes", "turns", "actions", "answers", "defaults", "labels")
ANSWER_COLUMNS = ("run_id", "episode_id", "participant", "item", "value")
DEFAULT_COLUMNS = ("run_id", "episode_id", "participant", "seat", "after_party_turns", "ask")


def tables(run: str = "last", *, store: Any = None) -> dict[str, pd.DataFrame]:
    """The run's tidy tables by name (TABLES); an empty table keeps its columns."""
    import pandas as pd

    from disputelab.api import episode_frame, open_store
    from disputelab.web.people import stored_answers, stored_defaults

    opened = open_store(store, writable=False)
    run_id = opened.resolve_run(run)
    turns, actions = run_tables(opened, run_id)
    answers = [(run_id, *row) for row in stored_answers(Path(opened.root), run_id)]
    defaults = [(run_id, *row) for row in stored_defaults(Path(opened.root), run_id)]
    return {
        "episodes": episode_frame(opened, run_id),
        "turns": pd.DataFrame(turns, columns=list(TURN_COLUMNS)),
        "actions": pd.DataFrame(actions, columns=list(ACTION_COLUMNS)),
        "answers": pd.DataFrame(answers, columns=list(ANSWER_COLUMNS)),
        "defaults": pd.DataFrame(defaults, columns=list(DEFAULT_COLUMNS)),
        "labels": _labels(Path(opened.root), run_id),
    }


LABEL_COLUMNS = (
    "run_id", "episode_id", "turn", "annotator", "kind", "party", "topic", "item", "value",
)  # fmt: skip


def _labels(root: Path, run_id: str) -> pd.DataFrame:
    """The run's annotation labels, one per row (`turn` -1: about the whole episode)."""
    import pandas as pd

    from disputelab.annotation.store import read_labels

    rows = [
        (x.run, x.episode, x.turn, x.annotator, x.kind, x.party, x.topic, x.item, x.value)
        for x in read_labels(root, run_id)
    ]
    return pd.DataFrame(rows, columns=list(LABEL_COLUMNS))


def write_tables(run: str, folder: str | os.PathLike[str], *, store: Any = None) -> list[Path]:
    """Each of the run's tables as `folder/NAME.parquet`, each file written whole or not
    at all; the paths written."""
    from disputelab.api import write_file

    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    return [
        write_file(target / f"{name}.parquet", frame.to_parquet(index=False))
        for name, frame in tables(run, store=store).items()
    ]
