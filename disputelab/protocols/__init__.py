"""Protocols own turn-taking and termination; one folder per protocol, each registered
in `protocols.base.PROTOCOLS`."""
