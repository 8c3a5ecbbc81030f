"""What this process may run on and how busy the machine is: read by the benchmark
harness for its reports and by the embedded model to size its threads."""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity), else the machine's count."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def load_average() -> float | None:
    """The 1-minute load average, where the system gives one."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None
