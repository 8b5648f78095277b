"""The machine a benchmark ran on, measured while it runs and stored with the results, so that a
report describes the machine it was produced on rather than one described by hand once."""
from __future__ import annotations

import os
import platform


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (other jobs on a shared machine show up here)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def measure() -> dict:
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        memory = None
    return {"cpus": os.cpu_count(), "memory_bytes": memory, "load_avg": load_average(),
            "platform": platform.platform(), "python": platform.python_version()}


def describe(m: dict) -> str:
    """'2 CPUs, 7.8 GiB memory, load average 1.52 at the start, 2.10 at the end (1 min)'."""
    parts = [f"{m.get('cpus', '?')} CPUs"]
    if m.get("memory_bytes"):
        parts.append(f"{m['memory_bytes'] / 2**30:.1f} GiB memory")
    start, end = m.get("load_avg"), m.get("load_avg_end")
    if start:
        parts.append(f"load average {start[0]:.2f} at the start"
                     + (f", {end[0]:.2f} at the end" if end else "") + " (1 min)")
    if len(parts) == 1:
        return f"{parts[0]} (memory and load not recorded)"
    return ", ".join(parts)
