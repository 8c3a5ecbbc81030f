"""What every benchmark prints first: the machine it measured on and how busy it was.

The figures in docs/performance.md are only comparable with the machine beside them, and
other work on a shared machine skews every one of them; so each script starts with the
same line, from here, rather than each saying it its own way.
"""

from __future__ import annotations

import os
import platform
import sqlite3

from disputelab.machine import usable_cpus


def machine_line(*extra: str) -> str:
    """One line: architecture, CPUs this process may use, Python, SQLite, the load
    averages as the benchmark starts (where the system gives them), and `extra`."""
    try:
        load = "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        load = "no load average"
    parts = [
        f"{platform.machine()}, {usable_cpus()} CPUs usable",
        f"Python {platform.python_version()} ({platform.python_implementation()})",
        f"SQLite {sqlite3.sqlite_version}",
        load,
        *extra,
    ]
    return "# " + ", ".join(parts)
