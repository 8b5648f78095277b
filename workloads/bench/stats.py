"""Statistics over the runs and simulator rows of a results.json, shared by the goals and the
report. Only runs that returned the reference checksum count: a failed run never moves a median.
Runs of the `unlimited` pseudo-policy (plugin off, ample memory) have no cache fraction (None)."""
from __future__ import annotations

import math
import statistics

import numpy as np


def fkey(f: float) -> str:
    """A cache fraction as results.json keys and the report print it (0.5, not 0.50)."""
    return f"{f:g}"


def fractions_run(runs: list[dict], workload: str, fractions: list[float]) -> list[float]:
    """The cache fractions (of ``fractions``) at which ``workload`` has runs: after a --merge of
    parts run at different fractions, a workload's tables show only the fractions it ran at."""
    return [f for f in fractions if select(runs, workload, fraction=f)]


def ok_runs(runs: list[dict]) -> list[dict]:
    return [r for r in runs if r.get("status", "ok") == "ok" and r.get("jct_s") is not None]


def select(runs: list[dict], workload: str, policy: str | None = None,
           fraction: float | None = None) -> list[dict]:
    return [r for r in runs if r["workload"] == workload
            and (policy is None or r["policy"] == policy)
            and (fraction is None or (r.get("cache_fraction") is not None
                                      and math.isclose(r["cache_fraction"], fraction)))]


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


# ---------------------------------------------------------------- unlimited memory and bounds
PLAIN = "plain"  # the pseudo-policy of plugin-off runs at the policies' cache fraction
UNLIMITED = "unlimited"  # the pseudo-policy of the plugin-off runs at ample memory (no fraction)
NOISE_RATIO = 1.05  # a time ratio below this is within the noise, whatever the spread says


def unlimited_times(runs: list[dict], cal: dict | None, workload: str) -> tuple[list[float], str | None]:
    """The unlimited-memory job times of `workload` and where they come from: "runs" (the repeated,
    interleaved `unlimited` cell), else "calibration" (results.json from before that cell: the
    calibration's single plugin-off run), else ([], None)."""
    xs = [r["jct_s"] for r in ok_runs(select(runs, workload, UNLIMITED))]
    if xs:
        return xs, "runs"
    t = (cal or {}).get("jct_unlimited_s")
    return ([t], "calibration") if t else ([], None)


def jcts(runs: list[dict], workload: str, policy: str, fraction: float | None) -> list[float]:
    return [r["jct_s"] for r in ok_runs(select(runs, workload, policy, fraction))]


def ratio_interval(num: list[float], den: list[float]) -> dict | None:
    """The ratio of the medians of two samples of times, with the interval every pairing of the
    two samples spans: [min(num) / max(den), max(num) / min(den)]. Conservative on purpose: a
    claim "num is slower than den" holds only if even the least favourable pairing says so."""
    if not num or not den or min(den) <= 0:
        return None
    return {"median": statistics.median(num) / statistics.median(den),
            "low": min(num) / max(den), "high": max(num) / min(den),
            "n": (len(num), len(den))}


def paired_ratio_interval(ratios: list[float], level: float = 0.95, draws: int = 10_000,
                          seed: int = 0) -> dict | None:
    """The geometric mean of per-repeat ratios (each a run over its own repeat's baseline) with
    a percentile bootstrap interval over the repeats (resampled with replacement; ``draws``
    resamples, seeded: the same runs give the same interval). The geometric mean, not the
    median: with a handful of repeats the median's bootstrap jumps between a few values. The
    interval is only as good as the repeats are independent; it says how far this sample can
    resolve a ratio, e.g. whether it lies wholly under an overhead goal."""
    xs = [x for x in ratios if x > 0]
    if len(xs) < 2:
        return None
    logs = np.log(np.asarray(xs, dtype=float))
    picks = np.random.default_rng(seed).integers(0, len(logs), size=(draws, len(logs)))
    means = logs[picks].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return {"geomean": float(np.exp(logs.mean())), "low": float(np.exp(low)),
            "high": float(np.exp(high)), "n": len(xs), "level": level}


def claim_holds(iv: dict | None, at_least: float = NOISE_RATIO) -> bool:
    """Does the spread allow the claim "num takes at least `at_least` x den's time"? Yes when the
    ratio of medians is >= at_least AND the interval of the ratio lies wholly above 1 (the two
    samples' ranges do not overlap)."""
    return bool(iv) and iv["median"] >= at_least and iv["low"] > 1.0


def closed_share(runs: list[dict], cal: dict | None, workload: str, policy: str,
                 fraction: float) -> dict | None:
    """The share of LRU's distance to unlimited memory that `policy` closes at `fraction`:
    (T_lru - T_policy) / (T_lru - T_unlimited), medians. `share` is None when that distance is
    within the noise (`claim_holds` of T_lru over T_unlimited fails): dividing by noise is noise."""
    lru, pol = jcts(runs, workload, "lru", fraction), jcts(runs, workload, policy, fraction)
    unl, source = unlimited_times(runs, cal, workload)
    iv = ratio_interval(lru, unl)
    if not pol or iv is None:
        return None
    t_lru, t_pol, t_unl = (statistics.median(x) for x in (lru, pol, unl))
    resolved = claim_holds(iv)
    return {"share": (t_lru - t_pol) / (t_lru - t_unl) if resolved else None,
            "lru_over_unlimited": iv, "resolved": resolved, "source": source,
            "t_lru": t_lru, "t_policy": t_pol, "t_unlimited": t_unl}


def bound_of(sim: list[dict], workload: str, fraction: float) -> float | None:
    """The upper bound on the hit ratio the simulator replay recorded (`bound_hit_ratio`, from
    `lrc.bound.hit_bound`), None when the rows carry none."""
    for s in sim:
        if s["workload"] == workload and math.isclose(s["cache_fraction"], fraction) \
                and s.get("bound_hit_ratio") is not None:
            return s["bound_hit_ratio"]
    return None


def hit_distance_to_bound(runs: list[dict], sim: list[dict], workload: str, policy: str,
                          fraction: float) -> float | None:
    """bound_hit_ratio - the policy's median measured hit ratio (>= 0 if the bound holds)."""
    b, h = bound_of(sim, workload, fraction), median_of(runs, "hit_ratio", workload, policy, fraction)
    return None if b is None or h is None else b - h


def fidelity(runs: list[dict], workload: str, policy: str, fraction: float) -> dict | None:
    """Live hit ratio against the replay of the same run's trace (`replay_hit_ratio`), in
    points per run: median, min, max; None without replayed runs."""
    pairs = [(r["hit_ratio"], r["replay_hit_ratio"])
             for r in ok_runs(select(runs, workload, policy, fraction))
             if r.get("hit_ratio") is not None and r.get("replay_hit_ratio") is not None]
    if not pairs:
        return None
    diffs = sorted(100 * (a - b) for a, b in pairs)
    return {"live": statistics.median(a for a, _ in pairs),
            "replay": statistics.median(b for _, b in pairs),
            "diff": statistics.median(diffs), "lo": diffs[0], "hi": diffs[-1], "n": len(pairs)}
