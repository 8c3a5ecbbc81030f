"""Seeds for the model calls of one turn.

Every call an agent makes for a turn gets its backend seed and its cache sample index
from here. `repeat` tells apart calls that would otherwise be identical (rollouts of the
same position, repeated samples): each gets its own cache entry and replays exactly.
"""

from __future__ import annotations

from typing import NamedTuple

# Party turns per episode seed: seeds of consecutive episodes never share a turn's seed
# below this many party turns.
TURNS_PER_SEED = 1000


class Sampling(NamedTuple):
    """The `seed` and `sample` fields of a `ChatRequest` (pass as `**s._asdict()`)."""

    seed: int
    sample: int


def turn_sampling(episode_seed: int, party_turn: int, repeat: int = 0) -> Sampling:
    """The seed and cache sample index of the `repeat`-th identical call at `party_turn`."""
    return Sampling(episode_seed * TURNS_PER_SEED + party_turn, repeat)
