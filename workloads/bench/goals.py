"""The benchmark's goals as data: each row names a check and its threshold, `evaluate` applies the
rows to the medians of a results.json. A new target is a new row, not an edit of the report."""
from __future__ import annotations

from typing import Callable, NamedTuple

from workloads.bench.stats import fkey, median_of, sim_row, speedup

GOALS: tuple[dict, ...] = (
    # the policy's best-fraction median speedup over LRU on any of the workloads
    {"check": "best_speedup", "policy": "lrc", "workloads": ("pagerank", "cc"), "at_least": 1.5},
    # the policy's best-fraction speedup on the workload, and faster there than the rival
    {"check": "beats_rival", "policy": "lerc", "workload": "zip", "rival": "lrc", "at_least": 1.3},
    # no policy's median job time in any cell more than this fraction above LRU's
    {"check": "max_slowdown", "at_most": 0.05},
    # measured hit ratio at most this far below the simulated Belady bound (min) in every cell
    {"check": "hit_gap_to_min", "at_most": 0.10},
)

# workloads.overhead: job time with the plugin on over plugin off, where it has nothing to gain
# (no memory pressure, or lru under pressure): the 95% interval of the ratio lies under 1 + this
OVERHEAD = {"at_most": 0.02, "level": 0.95}


class Scope(NamedTuple):
    """What the checks read from a results.json."""
    runs: list[dict]
    sim: list[dict]
    workloads: list[str]
    policies: list[str]
    fractions: list[float]

    @classmethod
    def of(cls, res: dict) -> "Scope":
        st = res.get("settings", {})
        return cls(res.get("runs", []), res.get("sim", []), st.get("workloads", []),
                   st.get("policies", []), st.get("cache_fractions", []))

    def best(self, workload: str, policy: str) -> tuple[float | None, float | None]:
        """(median speedup over LRU, fraction) at the fraction where it is largest."""
        cands = [(s["median"], f) for f in self.fractions
                 if (s := speedup(self.runs, workload, policy, f))]
        return max(cands) if cands else (None, None)


def best_speedup(sc: Scope, g: dict) -> dict | None:
    p, lim = g["policy"], g["at_least"]
    if p not in sc.policies or "lru" not in sc.policies:
        return None
    got = [(w, *sc.best(w, p)) for w in g["workloads"] if w in sc.workloads]
    got = [x for x in got if x[1] is not None]
    if not got:
        return None
    w, s, f = max(got, key=lambda x: x[1])
    return {"goal": f"{p.upper()} median speedup over LRU >= {lim:g}x on "
                    f"{' or '.join(g['workloads'])} (best fraction)",
            "met": s >= lim, "value": f"{s:.2f}x ({w}, F={fkey(f)})",
            "gap": None if s >= lim else f"{lim - s:.2f}x short"}


def beats_rival(sc: Scope, g: dict) -> dict | None:
    p, w, rival, lim = g["policy"], g["workload"], g["rival"], g["at_least"]
    if w not in sc.workloads or p not in sc.policies or "lru" not in sc.policies:
        return None
    s, f = sc.best(w, p)
    if s is None:
        return None
    r = speedup(sc.runs, w, rival, f) if rival in sc.policies else None
    faster = r is None or s > r["median"]
    met = s >= lim and faster
    shortfalls = (f"{lim - s:.2f}x short" if s < lim else "",
                  f"not faster than {rival.upper()}" if not faster else "")
    return {"goal": f"{p.upper()} >= {lim:g}x over LRU on {w} and faster than {rival.upper()}",
            "met": met,
            "value": f"{s:.2f}x at F={fkey(f)}" + (f" ({rival.upper()} {r['median']:.2f}x)" if r else ""),
            "gap": None if met else "; ".join(x for x in shortfalls if x)}


def max_slowdown(sc: Scope, g: dict) -> dict | None:
    worst = [(s["median"], w, p, f) for w in sc.workloads for p in sc.policies if p != "lru"
             for f in sc.fractions if (s := speedup(sc.runs, w, p, f))]
    if not worst:
        return None
    s, w, p, f = min(worst)
    lim = 1 / (1 + g["at_most"])
    return {"goal": f"LRC/LERC never > {g['at_most']:.0%} slower than LRU (median)", "met": s >= lim,
            "value": f"worst {s:.2f}x ({w} {p} F={fkey(f)}): {100 * (1 / s - 1):+.0f}% time",
            "gap": None if s >= lim else f"{sum(1 for x in worst if x[0] < lim)} of {len(worst)} "
                                         f"cells slower than {g['at_most']:.0%}"}


def hit_gap_to_min(sc: Scope, g: dict) -> dict | None:
    gaps = []
    for w in sc.workloads:
        for f in sc.fractions:
            m = sim_row(sc.sim, w, "min", f)
            if not m:
                continue
            for p in sc.policies:
                if p == "lru":
                    continue
                h = median_of(sc.runs, "hit_ratio", w, p, f)
                if h is not None:
                    gaps.append((m["hit_ratio"] - h, w, p, f))
    if not gaps:
        return None
    gap, w, p, f = max(gaps)
    lim = g["at_most"]
    return {"goal": f"LRC/LERC hit ratio within {100 * lim:g} points of min (simulated Belady)",
            "met": gap <= lim,
            "value": f"largest gap {100 * gap:.1f} points ({w} {p} F={fkey(f)})",
            "gap": None if gap <= lim else f"{sum(1 for x in gaps if x[0] > lim)} of {len(gaps)} "
                                           f"cells more than {100 * lim:g} points below min"}


CHECKS: dict[str, Callable[[Scope, dict], dict | None]] = {
    f.__name__: f for f in (best_speedup, beats_rival, max_slowdown, hit_gap_to_min)}


def evaluate(res: dict, goals: tuple[dict, ...] = GOALS) -> list[dict]:
    """Each goal that the results can judge: {goal, met, value, gap}, in the table's order."""
    sc = Scope.of(res)
    return [row for g in goals if (row := CHECKS[g["check"]](sc, g))]
