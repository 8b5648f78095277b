"""The what-if's report: table, plots, recommendation lines, results.json (``lrc.whatif``
computes what it shows)."""
from __future__ import annotations

import json
from pathlib import Path

from lrc.execmem import page_bytes, resolve_storage_fraction
from lrc.whatif import WITHIN, WhatIf, fmt_bytes


def plot(res: WhatIf, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    policies = list(dict.fromkeys(r["policy"] for r in res.rows))
    mib = lambda b: b / (1 << 20)  # noqa: E731
    for p in policies:
        pts = sorted((r["per_executor_bytes"], r["hit_ratio"], r["est_runtime"])
                     for r in res.rows if r["policy"] == p)
        xs = [mib(x[0]) for x in pts]
        a1.plot(xs, [x[1] for x in pts], marker="o", label=p)
        a2.plot(xs, [x[2] for x in pts], marker="o", label=p)
    bound = sorted({(r["per_executor_bytes"], r["bound_hit_ratio"]) for r in res.rows})
    a1.plot([mib(b[0]) for b in bound], [b[1] for b in bound], "k--", label="bound")
    a2.axhline(res.unlimited_time, color="k", ls="--", label="unlimited memory")
    a2.axhline(res.unlimited_time * (1 + WITHIN), color="grey", ls=":", label="unlimited + 5%")
    unit = "MiB per executor" if res.log.sizes_known else "MiB per executor (sizes unknown)"
    a1.set(xlabel=f"cache ({unit})", ylabel="hit ratio", ylim=(0, 1.02), title="hit ratio")
    a2.set(xlabel=f"cache ({unit})", ylabel="estimated job time (s)", title="estimated job time")
    a2.set_ylim(bottom=0)
    a1.legend(fontsize=8)
    a2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _rec_line(name: str, r: dict | None, res: WhatIf) -> str:
    if r is None:
        return (f"- **{name}**: no cache size tried brings the estimated job time within 5% of "
                f"unlimited memory ({res.unlimited_time:.1f} s); try larger sizes.")
    return (f"- **{name}** (`{r['policy']}`): {fmt_bytes(r['per_executor_bytes'])} per executor "
            f"(fraction {r['cache_fraction']:.2f} of the working set): estimated "
            f"{r['est_runtime']:.1f} s vs {res.unlimited_time:.1f} s unlimited, hit ratio "
            f"{r['hit_ratio']:.2f}.")


def _admit_text(res: WhatIf) -> str:
    on = sorted({r["policy"] for r in res.rows if r.get("admit")})
    if not on:
        return "no policy replayed with it"
    return (f"{', '.join(on)} replayed with it: a store that would evict a block ranked above "
            "its own fails instead")


def _order_text(res: WhatIf) -> str:
    if res.task_order == "logged":
        return "each stage's tasks in the logged order"
    return ("each stage's tasks in the order Spark's scheduler gives them from what the replay "
            "caches (`lrc/task_order.py`; the bound keeps the logged order)")


def _claims_line(trace, cores: int) -> str:
    """What the report says about execution memory's claims on the cache (lrc.execmem)."""
    claims = [e.exec_bytes for e in trace.events if e.kind == "task" and e.exec_bytes]
    if not claims:
        return ("Execution memory: no task logged a claim (`Peak On Heap Execution Memory`, "
                "Spark 4): replayed as if execution never took cached blocks back")
    sf = resolve_storage_fraction(trace)
    text = (f"Execution memory: {len(claims)} tasks claimed some (up to "
            f"{fmt_bytes(max(claims))}); each claim evicts cached blocks in the policy's order "
            f"while its task runs, down to spark.memory.storageFraction = {sf:g} of the memory")
    if trace.executor_memory:
        text += (f"; logged with {fmt_bytes(trace.executor_memory)} per executor "
                 f"({fmt_bytes(page_bytes(trace.executor_memory, sf, cores))} pages), rescaled to "
                 "each size by Spark's page size")
    return text + " (`lrc/execmem.py`)"


def _outside_text(res: WhatIf) -> str:
    span = res.log.jobs_span_s
    if not span:
        return "nothing for the time outside tasks (the log has no job times)"
    return (f"{res.outside_s:.2f} s outside tasks (the logged jobs' span, {span:.2f} s, less the "
            "replay of the run as it ran: driver work between jobs, scheduling)")


def write_report(res: WhatIf, out: Path, command: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    plot(res, out / "whatif.png")
    el = res.log
    cols = ("size", "per executor", "policy", "hit ratio", "bound", "recomputed", "est. time (s)",
            "x unlimited")
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in res.rows:
        lines.append("| " + " | ".join([
            r["size"], fmt_bytes(r["per_executor_bytes"]),
            r["policy"] + (" + admission" if r.get("admit") else ""), f"{r['hit_ratio']:.3f}",
            f"{r['bound_hit_ratio']:.3f}", fmt_bytes(r["recomputed_bytes"]),
            f"{r['est_runtime']:.2f}", f"{r['vs_unlimited']:.2f}"]) + " |")
    src = ", ".join(f"RDD {k}: {v}" for k, v in sorted(el.size_source.items()))
    notes = []
    if el.sizes_estimated:
        notes.append("Block sizes are **estimates** for some RDDs (`rdd_info`: RDD Info of "
                     "completed stages; `input_metrics`: bytes read by the tasks that read them; "
                     "`inherited`: another generation's, the RDD's blocks only ever read with "
                     "others; `shared`: those tasks' bytes shared evenly; "
                     "`unknown`: 1 byte per block, byte figures then meaningless). Enable "
                     "`spark.eventLog.logBlockUpdates.enabled` for measured sizes.")
    if not el.complete:
        notes.append("The log has no application end (still running or killed): only the jobs "
                     "logged are replayed.")
    if el.warnings:
        notes.append(f"{len(el.warnings)} parser warning(s), first: {el.warnings[0]}")
    src += "\n\n" + _claims_line(el.trace, res.cores)
    t = res.timings
    text = f"""# What-if: {el.app_name or el.app_id or el.path.name}

Produced by:

```
{command}
```

Used: {el.summary()}. Replayed on {res.executors} executor(s) x {res.cores} core(s), references
`{res.refs}` (profile: the application recurs and its earlier run is the profile), admission
`{res.admit}` as `spark.lrc.admit` sets it live ({_admit_text(res)}), {_order_text(res)}.
Cached working set (most bytes cached at once with unlimited memory):
{fmt_bytes(res.working_set)}. Block sizes: {src}.

## Recommendation

Smallest cache at which the estimated job time is within 5% of unlimited memory's:

{_rec_line("best policy", res.recommendation.get("best"), res)}
{_rec_line("Spark's LRU", res.recommendation.get("lru"), res)}

## Results

Hit ratio = cache hits / cached reads; bound = an upper bound on any policy's hit ratio
(`lrc.bound`); recomputed = bytes of cached blocks rebuilt after an eviction; est. time = the
simulator's cost model (task durations from the log, plus the rebuild time of each miss: what
its RDD's first build took in warm tasks, which can exceed a rebuild's - 2.2x on a SQL join
cached early - so estimates under pressure lean high; `lrc/sim.py`) plus {_outside_text(res)},
x unlimited = over unlimited memory's {res.unlimited_time:.2f} s.

{chr(10).join(lines)}

![hit ratio and estimated job time vs cache size](whatif.png)

{chr(10).join("- " + n for n in notes)}

Time: parse {t['parse_s']:.2f} s, compile {t['compile_s']:.2f} s, replays and bounds
{t['replay_s']:.2f} s in {t['workers']} process(es) (CPU: replays {t['replay_cpu_s']:.2f} s,
bounds {t['bound_cpu_s']:.2f} s); total {t['total_s']:.2f} s for {el.tasks} tasks.
"""
    (out / "report.md").write_text(text)
    (out / "results.json").write_text(json.dumps({
        "eventlog": str(el.path), "summary": el.summary(), "executors": res.executors,
        "cores": res.cores, "refs": res.refs, "admit": res.admit,
        "task_order": res.task_order,
        "working_set_bytes": res.working_set,
        "unlimited_est_runtime": res.unlimited_time, "outside_tasks_s": res.outside_s,
        "jobs_span_s": el.jobs_span_s, "size_source": el.size_source,
        "recommendation": res.recommendation, "timings": res.timings, "rows": res.rows,
        "warnings": el.warnings}, indent=1, default=str))
    return out / "report.md"
