"""Consensus trackers, metrics and statistics."""
