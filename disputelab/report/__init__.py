"""Rendering stored runs as markdown, JSON and CSV."""
