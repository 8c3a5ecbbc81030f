"""Mediator agents, one module or folder per protocol whose mediator seat they fill."""
