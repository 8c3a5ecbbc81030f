"""The built-in scenario library (data files)."""
