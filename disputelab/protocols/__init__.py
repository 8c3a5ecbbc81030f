"""Protocols own turn-taking and termination."""
