"""The simulator's side of a benchmark: the replay of each workload's calibration trace under
every policy (the `sim` rows, with the hit-ratio bound) and of each run's own trace (its
`replay_*` fields). The runner calls these after measuring; `--resim DIR W[,W]` calls them
again on DIR's recorded traces, so that a simulator fix re-generates a report without running
Spark again."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from lrc.unroll import threshold_of
from spark_plugin.config import admits
from workloads.bench.cli import parse_list
from workloads.bench.report import render
from workloads.bench.stats import PLAIN
from workloads.bench.store import read_results, write_results
from workloads.bench.variants import variant_conf


def working_set_bytes(trace_path: str | Path) -> tuple[int, int, Any]:
    """(cached working set = peak bytes cached at once, number of blocks, compiled trace)."""
    from lrc.sim import CompiledTrace
    from lrc.trace import load_trace

    ct = CompiledTrace(load_trace(trace_path))
    return int(ct.working_set_bytes), len(ct.blocks), ct


def bound_hit_ratio(ct, cache_fraction: float, executors: int) -> float | None:
    """HOOK for the upper bound on the hit ratio: `lrc.bound.hit_bound(ct, cache_fraction,
    executors)`, recorded on the simulator rows as `bound_hit_ratio` and reported as each policy's
    distance to it. None (no field) while lrc/bound.py does not exist."""
    try:
        from lrc.bound import hit_bound
    except ModuleNotFoundError as e:
        if e.name in ("lrc.bound", "lrc"):
            return None
        raise
    b = hit_bound(ct, cache_fraction, executors)
    if isinstance(b, dict):
        b = b.get("hit_ratio")
    elif b is not None and not isinstance(b, (int, float)):
        b = getattr(b, "hit_ratio", b)
    return None if b is None else float(b)


def calibration_rows(w: str, trace: str, fractions: list[float], policies: list[str],
                     refs: str, executors: int, cores: int, unroll: int | None = None,
                     conf: dict | None = None, admit_default: str | None = None) -> list[dict]:
    """The `sim` rows of workload `w`: its calibration trace replayed at each fraction under
    `min` (profile refs) and each policy (`refs`), with the bound; `unroll`: the runs'
    spark.storage.unrollMemoryThreshold (`lrc.unroll`); each policy with admission where its runs
    under `conf` have it (`admit_of`: `crd+admit`, crd by default)."""
    from lrc.sim import simulate

    _, _, ct = working_set_bytes(trace)
    rows = []
    for f in fractions:
        bound: dict = {}
        try:
            b = bound_hit_ratio(ct, f, executors)
            if b is not None:
                bound["bound_hit_ratio"] = b
        except Exception as e:  # the bound is informative; never lose the replay for it
            bound["bound_error"] = f"{type(e).__name__}: {e}"
        for pol in ["min", *(p for p in policies if p != PLAIN)]:
            pol_refs = "profile" if pol == "min" else refs
            row = {"workload": w, "cache_fraction": f, "policy": pol, "refs": pol_refs, **bound}
            try:
                d = simulate(ct, variant_conf(pol)[0], f, executors=executors, cores=cores,
                             refs=pol_refs, unroll_threshold=unroll,
                             admit=admit_of(conf, pol, admit_default)).to_dict()
                rows.append({**row, "hit_ratio": d["hit_ratio"],
                             "effective_hit_ratio": d["effective_hit_ratio"],
                             "est_runtime": d["est_runtime"], "evictions": d["evictions"],
                             "recomputed_bytes": d["recomputed_bytes"]})
            except Exception as e:  # the bound is informative; never lose the runs for it
                rows.append({**row, "error": f"{type(e).__name__}: {e}"})
    return rows


def own_run(trace: str | None, policy: str, storage_per_executor, executors: int, cores: int,
            refs: str, storage_fraction: float, unroll: int | None = None,
            admit: bool = False) -> dict:
    """The simulator's replay of a run's own trace, same policy, same refs and the cache the
    executors really had, and the execution memory its tasks claimed from that cache
    (`lrc.execmem`, under the run's spark.memory.storageFraction) and the unroll memory its
    stores reserved (`lrc.unroll`; `unroll`: its spark.storage.unrollMemoryThreshold): what the
    live hit ratio should be if tables were in force whenever an executor evicts (issue 10's
    measure); `admit`: the run's spark.lrc.admit (`admit_of`)."""
    from lrc.sim import simulate

    try:
        ws, _, ct = working_set_bytes(trace)
        f = storage_per_executor * executors / ws
        d = simulate(ct, policy, f, executors=executors, cores=cores, refs=refs,
                     storage_fraction=storage_fraction, unroll_threshold=unroll,
                     admit=admit).to_dict()
    except Exception as e:  # informative only: never lose the run for it
        return {"replay_error": f"{type(e).__name__}: {e}"}
    return {"replay_hit_ratio": d["hit_ratio"],
            "replay_effective_hit_ratio": d["effective_hit_ratio"], "replay_fraction": f,
            "replay_exec_evictions": d["exec_evictions"]}


def storage_fraction(conf: dict | None) -> float:
    """The runs' spark.memory.storageFraction (Spark's default when their conf sets none)."""
    from lrc.execmem import SPARK_STORAGE_FRACTION, storage_fraction_of

    sf = storage_fraction_of(conf)
    return SPARK_STORAGE_FRACTION if sf is None else sf


def admit_of(conf: dict | None, policy: str, default: str | None = None) -> bool:
    """Whether runs of `policy` (`crd+admit`: its variant's conf added) under `conf` had
    admission on (lrc.evict's `admit`): their spark.lrc.admit, else `default` (None: today's,
    auto - results recorded before it was "false" say so in their settings)."""
    base, extra = variant_conf(policy)
    return admits(base, {**(conf or {}), **extra}.get("spark.lrc.admit", default))


def resim(out_dir: str | Path, workloads: str) -> Path:
    """Replays again, with the simulator as it is now, what DIR's results.json recorded for the
    given workloads: the `sim` rows (same fractions and policies) and every run's `replay_*`
    fields; a trace no longer on disk is an error naming it. Re-renders DIR."""
    res = read_results(out_dir)
    ws = parse_list(workloads)
    cluster, refs = res["cluster"], res["settings"]["refs"]
    n, cores = cluster["executors"], cluster["cores"]
    for w in ws:
        rows = [r for r in res.get("sim", []) if r["workload"] == w]
        cal = res.get("calibration", {}).get(w)
        if not rows or not cal or not cal.get("trace"):
            raise SystemExit(f"--resim: {out_dir} has no simulator rows or calibration trace for {w}")
        traces = [cal["trace"]] + [r["trace"] for r in res["runs"]
                                   if r["workload"] == w and "replay_hit_ratio" in r]
        missing = [t for t in traces if not Path(t).exists()]
        if missing:
            raise SystemExit(f"--resim: traces of {w} are gone: {', '.join(missing)}")
        fractions = sorted({r["cache_fraction"] for r in rows})
        policies = list(dict.fromkeys(r["policy"] for r in rows if r["policy"] != "min"))
        unroll = threshold_of(cluster.get("conf"))
        default = res["settings"].get("admit_default", "false")  # before it was recorded: false
        res["sim"] = [r for r in res["sim"] if r["workload"] != w] + calibration_rows(
            w, cal["trace"], fractions, policies, refs, n, cores, unroll, cluster.get("conf"),
            default)
        for r in res["runs"]:
            if r["workload"] == w and "replay_hit_ratio" in r:
                r.update(own_run(r["trace"], variant_conf(r["policy"])[0],
                                 r["storage_bytes_per_executor"], n, cores, refs,
                                 storage_fraction(cluster.get("conf")), unroll,
                                 admit_of(cluster.get("conf"), r["policy"], default)))
    res["command"] = res.get("command", "?") + \
        f"\npython -m workloads.bench --resim {out_dir} {','.join(ws)}   # replays again"
    write_results(out_dir, res)
    return render(out_dir)
