"""The SQLite run store."""
