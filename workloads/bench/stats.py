"""Statistics over the runs and simulator rows of a results.json, shared by the goals and the
report. Only runs that returned the reference checksum count: a failed run never moves a median."""
from __future__ import annotations

import math
import statistics


def fkey(f: float) -> str:
    """A cache fraction as results.json keys and the report print it (0.5, not 0.50)."""
    return f"{f:g}"


def ok_runs(runs: list[dict]) -> list[dict]:
    return [r for r in runs if r.get("status", "ok") == "ok" and r.get("jct_s") is not None]


def select(runs: list[dict], workload: str, policy: str | None = None,
           fraction: float | None = None) -> list[dict]:
    return [r for r in runs if r["workload"] == workload
            and (policy is None or r["policy"] == policy)
            and (fraction is None or math.isclose(r["cache_fraction"], fraction))]


def median_jct(runs: list[dict], workload: str, policy: str, fraction: float) -> float | None:
    xs = [r["jct_s"] for r in ok_runs(select(runs, workload, policy, fraction))]
    return statistics.median(xs) if xs else None


def median_of(runs: list[dict], key: str, workload: str, policy: str, fraction: float):
    xs = [r[key] for r in ok_runs(select(runs, workload, policy, fraction)) if r.get(key) is not None]
    return statistics.median(xs) if xs else None


def speedup(runs: list[dict], workload: str, policy: str, fraction: float,
            baseline: str = "lru") -> dict | None:
    """Median over repeats of (baseline time / policy time) in the same repeat, with min and max.
    Only repeats where both runs succeeded with the right checksum count."""
    base = {r["repeat"]: r["jct_s"] for r in ok_runs(select(runs, workload, baseline, fraction))}
    ratios = sorted(base[r["repeat"]] / r["jct_s"]
                    for r in ok_runs(select(runs, workload, policy, fraction))
                    if r["repeat"] in base and r["jct_s"] > 0)
    if not ratios:
        return None
    return {"median": statistics.median(ratios), "min": ratios[0], "max": ratios[-1],
            "n": len(ratios)}


def sim_row(sim: list[dict], workload: str, policy: str, fraction: float) -> dict | None:
    for s in sim:
        if s["workload"] == workload and s["policy"] == policy and \
                math.isclose(s["cache_fraction"], fraction) and "error" not in s:
            return s
    return None
