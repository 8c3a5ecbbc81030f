"""Compare models, mediators or whole runs: metrics side by side, paired differences and a
Bradley-Terry leaderboard (see README.md)."""

from disputelab.compare.compare import compare, compare_played
from disputelab.compare.episodes import BY, CompareError
from disputelab.compare.leaderboard import FORMATS, Leaderboard

__all__ = ["BY", "FORMATS", "CompareError", "Leaderboard", "compare", "compare_played"]
