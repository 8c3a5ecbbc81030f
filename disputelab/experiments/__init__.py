"""Running episodes: one episode runner, experiment specs and grids, re-scoring."""
