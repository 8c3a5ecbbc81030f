"""Running episodes: single matched runs (grids come later)."""
