"""report.md and the two plots, rendered from results.json alone, so a report can be re-rendered
(`--render`) or re-built after a merge without re-running anything."""
from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

from workloads.bench import goals, machine
from workloads.bench.stats import (NOISE_RATIO, UNLIMITED, bound_of, claim_holds, closed_share,
                                   fidelity, fkey, fractions_run,
                                   hit_distance_to_bound, median_jct, median_of, ok_runs, select,
                                   sim_row, speedup, unlimited_times)
from workloads.bench.store import read_results


def _f(x, fmt="{:.2f}", none="-"):
    return none if x is None else fmt.format(x)


def _foreseen(rs: list[dict]) -> str:
    """``foreseen of reads (share)`` summed over the runs' `stats()["foreseen"]`; "-" without
    predictions (or stats from before the count)."""
    f = [r["foreseen"] for r in rs if isinstance(r.get("foreseen"), dict)]
    reads, seen = (sum(x.get(k) or 0 for x in f) for k in ("reads", "foreseen"))
    return f"{seen}/{reads} ({seen / reads:.0%})" if reads else "-"


def _pct(x):
    return _f(x, "{:.1%}")


def _fk(f) -> str:
    return UNLIMITED if f is None else fkey(f)


_CAUSE = re.compile(r"([\w.$]+(?:Error|Exception)): (.*?)(?=: [\w.$]+(?:Error|Exception): |$)")
STARVED = "UNABLE_TO_ACQUIRE_MEMORY"


def error_summary(error: str | None) -> str:
    """The innermost cause of a run's error, one short line: a py4j error's first line names
    only the call (`... while calling o725.fit.`); Spark puts the task's failure at the end of
    the next one."""
    if not error:
        return ""
    head = " ".join(line.strip() for line in error.splitlines()[:2] if not line.startswith("\tat"))
    causes = _CAUSE.findall(head)
    if not causes:
        return error.splitlines()[0][:160]
    cls, msg = causes[-1]
    return f"{cls.rsplit('.', 1)[-1]}: {msg}"[:160]


def _unlimited(runs: list[dict], cal: dict, w: str) -> tuple[float | None, str]:
    """(median unlimited-memory time, how it was measured) for the tables."""
    xs, src = unlimited_times(runs, cal.get(w), w)
    if not xs:
        return None, "not measured"
    med = statistics.median(xs)
    if src == "runs":
        return med, f"median of {len(xs)} interleaved runs [{min(xs):.2f}-{max(xs):.2f}]"
    return med, ("the calibration's single run (no repeated unlimited-memory cell: --no-unlimited, or a "
                 "results.json that predates it)")


def render(out_dir: str | Path) -> Path:
    """Write report.md, time_vs_fraction.png and hit_ratio_vs_fraction.png from results.json."""
    out = Path(out_dir)
    res = read_results(out)
    (out / "report.md").write_text(report_markdown(res, out))
    try:
        plots(res, out)
    except Exception as e:  # a missing matplotlib must not lose the report
        print(f"plots not written: {e!r}", file=sys.stderr)
    return out / "report.md"


def report_markdown(res: dict, out: Path | None = None) -> str:
    runs, sim, cal = res.get("runs", []), res.get("sim", []), res.get("calibration", {})
    st = res.get("settings", {})
    wls, pols, fracs = st.get("workloads", []), st.get("policies", []), st.get("cache_fractions", [])
    fr = {w: fractions_run(runs, w, fracs) for w in wls}
    failed = [r for r in runs if r.get("status", "ok") != "ok"]
    L: list[str] = ["# spark-lrc benchmark: LRU vs DAG-aware eviction", ""]
    if failed:
        L += [f"> **FAILED: {len(failed)} of {len(runs)} runs failed** (checksum mismatch or error). "
              "Their times are excluded from every table; see *Checksums* below.", ""]
    elif runs:
        L += [f"All {len(runs)} runs returned the plugin-off reference checksum.", ""]
    L += ["Command:", "", "```", res.get("command", "?"), "```", ""]
    cl, host = res.get("cluster", {}), machine.describe(res.get("machine", {}))
    L += [f"Started {res.get('started', '?')}, finished {res.get('finished', '?')}. "
          f"Cluster: {cl.get('master', '?')}, {cl.get('executors', '?')} executors x "
          f"{cl.get('cores', 1)} core (conf {json.dumps(cl.get('conf', {}))}). Machine: {host}: "
          f"timings vary with the machine's load, so compare **ratios and medians**, not "
          f"seconds. Every run is a fresh driver process; job time (`jct`) is the workload's `run()` "
          f"only (no session start-up). Policies run interleaved, their order rotated per repeat.",
          "",
          f"Reference counts: **{st.get('refs', 'online')}** "
          + ("(job by job as jobs are submitted, LRC-Online)." if st.get("refs", "online") == "online"
             else "(the calibration trace is `spark.lrc.profile`: recurring-application mode).")
          + f" Cache fraction F = per-executor storage memory x executors / the workload's cached "
          f"working set ({st.get('working_set', 'total bytes of all cached blocks')}), set through "
          f"`spark.memory.fraction` from the executors' measured usable heap; each run records the "
          f"storage cap Spark applied.", "",
          f"Unlimited memory (`{UNLIMITED}`): plugin off at the calibration's spark.memory.fraction, "
          f"repeated as often as the policies and interleaved with their runs; without that cell "
          f"(`--no-unlimited`, or an older results.json), the calibration's single plugin-off run stands in and the tables say "
          f"so. Share of LRU's distance closed = (T_lru - T_policy) / (T_lru - T_unlimited), medians; "
          f"`-` when that distance is within the noise: T_lru / T_unlimited below {NOISE_RATIO:.2f}x, or "
          f"the two samples' ranges overlap (min LRU time <= max unlimited time).", ""]

    # ---- calibration
    L += ["## Calibration (ample memory)", "",
          "| workload | scale / args | reference checksum | jct plugin off, 1 run (s) | working set (MB) | blocks "
          "| usable heap / executor (MB) | spark.memory.fraction per F | live hit / eff. at ample memory "
          "(evictions) |", "|---|---|---|---|---|---|---|---|---|"]
    for w in wls:
        c = cal.get(w)
        if not c:
            continue
        mf = ", ".join(f"{k}: {v:.4f}" for k, v in c.get("memory_fraction", {}).items())
        args = ", ".join(f"{k}={v}" for k, v in (c.get("kwargs") or {}).items())
        L.append(f"| {w} | {c.get('scale')}{' / ' + args if args else ''} | `{c.get('checksum')}` | "
                 f"{_f(c.get('jct_unlimited_s'))} | {c.get('working_set_bytes', 0) / 2**20:.1f} | "
                 f"{c.get('cached_blocks')} | {c.get('usable_heap_bytes', 0) / 2**20:.0f} | {mf} | "
                 f"{_pct(c.get('calibration_hit_ratio'))} / {_pct(c.get('calibration_effective_hit_ratio'))} "
                 f"({c.get('calibration_evictions')}) |")
    caps = [r["storage_cap_error"] for r in runs if r.get("storage_cap_error") is not None]
    if caps:
        L += ["", f"Storage cap applied vs asked, over all runs: {min(caps):+.1%} .. {max(caps):+.1%}."]
    L.append("")

    # ---- speedups
    L += ["## Speedup vs LRU (median of per-repeat ratios LRU time / policy time, [min-max])", ""]
    others = [p for p in pols if p != "lru"]
    L += ["| workload | F | " + " | ".join(others) + " | min-bound (sim, est.) |",
          "|---|---|" + "---|" * (len(others) + 1)]
    for w in wls:
        for f in fr[w]:
            cells = []
            for p in others:
                s = speedup(runs, w, p, f)
                cells.append("-" if not s else
                             f"**{s['median']:.2f}x** [{s['min']:.2f}-{s['max']:.2f}]")
            m, l = sim_row(sim, w, "min", f), sim_row(sim, w, "lru", f)
            est = (f"{l['est_runtime'] / m['est_runtime']:.2f}x" if m and l and m["est_runtime"] > 0
                   else "-")
            L.append(f"| {w} | {fkey(f)} | " + " | ".join(cells) + f" | {est} |")
    L.append("")

    # ---- median times
    L += ["## Median job time (s)", "",
          "| workload | F | " + " | ".join(pols) + " | unlimited (plugin off) |",
          "|---|---|" + "---|" * (len(pols) + 1)]
    how = {}
    for w in wls:
        t_unl, how[w] = _unlimited(runs, cal, w)
        for f in fr[w]:
            cells = [_f(median_jct(runs, w, p, f)) for p in pols]
            L.append(f"| {w} | {fkey(f)} | " + " | ".join(cells) + f" | {_f(t_unl)} |")
    single = [w for w, h in how.items() if h.startswith("the calibration")]
    notes = [f"{w}: {h}" for w, h in how.items() if w not in single]
    if single:
        notes.append(f"{', '.join(single)}: the calibration's single plugin-off run (no repeated "
                     f"`{UNLIMITED}` cell: --no-unlimited, or a results.json that predates it)")
    if notes:
        L += ["", "Unlimited: " + "; ".join(notes) + "."]
    L.append("")

    # ---- distance to unlimited memory, distance to the hit-ratio bound
    L += ["## What each policy wins back", "",
          "Share of LRU's distance to unlimited memory closed, (T_lru - T_policy) / (T_lru - "
          "T_unlimited) from medians (1 = as fast as unlimited memory, 0 = no better than LRU, "
          "< 0 = slower than LRU); `-` when LRU's distance is within the noise (see above). Hit "
          "distance = bound - measured median hit ratio, in points, against the simulator's upper "
          "bound `bound_hit_ratio` (`lrc.bound`).", "",
          "| workload | F | LRU / unlimited [interval] | " + " | ".join(f"{p} share closed" for p in others)
          + " | hit bound | " + " | ".join(f"{p} hit distance" for p in pols) + " |",
          "|---|---|---|" + "---|" * (len(others) + 1 + len(pols))]
    any_bound = False
    for w in wls:
        for f in fr[w]:
            cs = {p: closed_share(runs, cal.get(w), w, p, f) for p in others}
            iv = next((c["lru_over_unlimited"] for c in cs.values() if c), None)
            if iv is None:
                lru_unl = closed_share(runs, cal.get(w), w, "lru", f)
                iv = lru_unl["lru_over_unlimited"] if lru_unl else None
            ivs = (f"{iv['median']:.2f}x [{iv['low']:.2f}-{iv['high']:.2f}]"
                   + ("" if claim_holds(iv) else " (noise)")
                   + (" (1 unlimited run)" if iv["n"][1] == 1 else "") if iv else "-")
            shares = [_f(c["share"], "{:+.2f}") if c else "-" for c in cs.values()]
            b = bound_of(sim, w, f)
            any_bound |= b is not None
            dists = [_f(hit_distance_to_bound(runs, sim, w, p, f), "{:+.1%}") for p in pols]
            L.append(f"| {w} | {fkey(f)} | {ivs} | " + " | ".join(shares) + f" | {_pct(b)} | "
                     + " | ".join(dists) + " |")
    if not any_bound:
        L += ["", "No simulator row carries `bound_hit_ratio` (no `lrc.bound` when the benchmark "
                  "ran): hit distances are `-`; the *Hit ratios* table's `min` is the simulated "
                  "Belady replay."]
    L.append("")

    # ---- hit ratios
    L += ["## Hit ratios (measured median; simulator replay of the calibration trace in brackets)", "",
          "Hit ratio = cached reads that hit / all cached reads; effective hit ratio = tasks whose "
          "cached inputs all hit / tasks with cached inputs. `min` is Belady's bound in the simulator.",
          "", "| workload | F | " + " | ".join(f"{p} hit / eff." for p in pols) + " | min hit / eff. (sim) |",
          "|---|---|" + "---|" * (len(pols) + 1)]
    for w in wls:
        for f in fr[w]:
            cells = []
            for p in pols:
                h = median_of(runs, "hit_ratio", w, p, f)
                e = median_of(runs, "effective_hit_ratio", w, p, f)
                s = sim_row(sim, w, p, f)
                simc = f" ({_pct(s['hit_ratio'])} / {_pct(s['effective_hit_ratio'])})" if s else ""
                cells.append(f"{_pct(h)} / {_pct(e)}{simc}")
            m = sim_row(sim, w, "min", f)
            L.append(f"| {w} | {fkey(f)} | " + " | ".join(cells) +
                     f" | {_pct(m['hit_ratio']) if m else '-'} / {_pct(m['effective_hit_ratio']) if m else '-'} |")
    L.append("")

    # ---- fidelity: each run against the simulator's replay of its own trace
    fid = [(w, f, p, fidelity(runs, w, p, f)) for w in wls for f in fr[w] for p in pols]
    fid = [x for x in fid if x[3]]
    if fid:
        L += ["## Live vs the replay of the same run", "",
              "Each run's own recorded trace replayed by the simulator under the same policy, refs "
              "and the storage the executors really had (`replay_hit_ratio`): where the live hit "
              "ratio falls short, the executors evicted with a table that was not yet in force "
              "(or the simulator's model differs). Points = live - replay, per run.", "",
              "| workload | F | policy | live hit (median) | replay hit (median) | "
              "live - replay, median [min, max] (points) | runs |", "|---|---|---|---|---|---|---|"]
        for w, f, p, d in fid:
            L.append(f"| {w} | {fkey(f)} | {p} | {_pct(d['live'])} | {_pct(d['replay'])} | "
                     f"{d['diff']:+.1f} [{d['lo']:+.1f}, {d['hi']:+.1f}] | {d['n']} |")
        L.append("")

    # ---- evictions / plan latency
    L += ["## Evictions, recomputations, plan latency (medians over repeats)", "",
          "Foreseen: of the cached reads of the jobs that started while predictions were "
          "registered, those the table in force already ranked as predicted reads (summed over "
          "repeats; `stats()[\"foreseen\"]`): that part of a plan did not wait for its job's start.", "",
          "| workload | F | policy | evictions | misses (recomputed or re-read partitions) | "
          "plan latency median / p99 (ms) | foreseen | evictions per RDD (last repeat) |",
          "|---|---|---|---|---|---|---|---|"]
    for w in wls:
        for f in fr[w]:
            for p in pols:
                rs = ok_runs(select(runs, w, p, f))
                if not rs:
                    continue
                pl = [r["plan_latency_ms"] for r in rs if r.get("plan_latency_ms")]
                med = statistics.median([x["median"] for x in pl if x.get("median") is not None] or [0])
                p99 = statistics.median([x["p99"] for x in pl if x.get("p99") is not None] or [0])
                last = max(rs, key=lambda r: r["repeat"]).get("evictions_per_rdd") or {}
                top = ", ".join(f"{k}:{v}" for k, v in sorted(last.items(), key=lambda kv: -kv[1])[:6])
                L.append(f"| {w} | {fkey(f)} | {p} | {_f(median_of(runs, 'evictions', w, p, f), '{:.0f}')} | "
                         f"{_f(median_of(runs, 'misses', w, p, f), '{:.0f}')} | {med:.1f} / {p99:.1f} | "
                         f"{_foreseen(rs)} | {top} |")
    L.append("")

    # ---- Spark's own task metrics
    met = [r for r in ok_runs(runs) if r.get("spark_metrics")]
    if met:
        L += ["## Spark task metrics (medians over repeats)", "",
              "From Spark's status store per run (traces/TAG.stages.json has them per stage): where "
              "the time goes besides evictions - executor run time, GC, spills (execution memory "
              "short), shuffle bytes.", "",
              "| workload | F | policy | job time (s) | executor run time (s) | CPU (s) | GC (s) | "
              "spilled memory / disk (MB) | shuffle write (MB) | tasks |", "|---|---|---|---|---|---|---|---|---|---|"]
        for w in wls:
            for f, p in [(None, UNLIMITED)] + [(f, p) for f in fr[w] for p in pols]:
                rs = select(met, w, p, f)  # f None: the unlimited runs (no fraction)
                if not rs:
                    continue

                def m(k, scale=1.0):
                    xs = [r["spark_metrics"].get(k) for r in rs]
                    xs = [x for x in xs if x is not None]
                    return statistics.median(xs) / scale if xs else None
                L.append(f"| {w} | {_fk(f)} | {p} | {_f(statistics.median(r['jct_s'] for r in rs))} | "
                         f"{_f(m('executor_run_time_ms', 1e3))} | {_f(m('executor_cpu_time_ms', 1e3))} | "
                         f"{_f(m('jvm_gc_time_ms', 1e3))} | {_f(m('memory_bytes_spilled', 2**20), '{:.1f}')} / "
                         f"{_f(m('disk_bytes_spilled', 2**20), '{:.1f}')} | "
                         f"{_f(m('shuffle_write_bytes', 2**20), '{:.1f}')} | {_f(m('tasks'), '{:.0f}')} |")
        L.append("")

    # ---- goals
    L += ["## Goals", "", "| goal | met | measured | gap |", "|---|---|---|---|"]
    for g in goals.evaluate(res):
        L.append(f"| {g['goal']} | {'yes' if g['met'] else '**NO**'} | {g['value']} | {g.get('gap') or ''} |")
    L.append("")

    # ---- checksums
    L += ["## Checksums", ""]
    if not runs:
        L.append("No runs recorded.")
    elif failed:
        L += [f"**{len(failed)} run(s) FAILED:**", "", "| workload | F | repeat | policy | status | checksum | reference | error |",
              "|---|---|---|---|---|---|---|---|"]
        for r in failed:
            err = error_summary(r.get("error")).replace("|", "/")
            L.append(f"| {r['workload']} | {_fk(r.get('cache_fraction'))} | {r['repeat']} | {r['policy']} | "
                     f"{r.get('status')} | `{r.get('checksum')}` | `{r.get('reference_checksum')}` | {err} |")
        starved = sorted({r["workload"] for r in failed if STARVED in (r.get("error") or "")})
        if starved:
            L += ["", f"Execution memory ran out in {', '.join(starved)}: the runner sets the cache "
                  "size through `spark.memory.fraction`, which is execution memory's share too, so "
                  "a small cached working set leaves tasks' aggregations and sorts too little. "
                  "Scale the workload up (`--scale W=N`) so that F x working set leaves them room."]
    else:
        L.append(f"All {len(runs)} runs: checksum equal to the plugin-off reference.")
    L.append("")

    # ---- analysis
    L += ["## Analysis", ""]
    note = (out / "analysis.md") if out else None
    if note is not None and note.exists():
        L += [note.read_text().strip(), ""]
    else:
        L += ["(no analysis.md next to results.json)", ""]
    L += ["Plots: `time_vs_fraction.png` (median job time normalised to LRU), "
          "`hit_ratio_vs_fraction.png` (measured hit ratio per policy, `min` from the simulator).", ""]
    return "\n".join(L)


def plots(res: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs, sim = res.get("runs", []), res.get("sim", [])
    st = res.get("settings", {})
    wls, pols, fracs = st.get("workloads", []), st.get("policies", []), st.get("cache_fractions", [])
    n = max(1, len(wls))
    for name, what in (("time_vs_fraction.png", "time"), ("hit_ratio_vs_fraction.png", "hit")):
        fig, axes = plt.subplots(1, n, figsize=(4 * n, 3.4), squeeze=False)
        for ax, w in zip(axes[0], wls):
            for p in pols:
                ys = []
                for f in fracs:
                    if what == "time":
                        s = speedup(runs, w, p, f)
                        ys.append(1 / s["median"] if s else float("nan"))
                    else:
                        h = median_of(runs, "hit_ratio", w, p, f)
                        ys.append(h if h is not None else float("nan"))
                ax.plot(fracs, ys, marker="o", label=p)
            if what == "time":
                unl = unlimited_times(runs, res.get("calibration", {}).get(w), w)[0]
                if unl:
                    t = statistics.median(unl)
                    ys = [t / m if (m := median_jct(runs, w, "lru", f)) else float("nan") for f in fracs]
                    ax.plot(fracs, ys, "k:", marker="^", label="unlimited memory")
            if what == "hit":
                ys = [(sim_row(sim, w, "min", f) or {}).get("hit_ratio", float("nan")) for f in fracs]
                ax.plot(fracs, ys, "k--", marker="x", label="min (sim)")
                ax.set_ylim(0, 1.05)
                ax.set_ylabel("hit ratio")
            else:
                ax.axhline(1.0, color="grey", lw=0.8)
                ax.set_ylabel("job time / LRU (median ratio)")
            ax.set_title(w)
            ax.set_xlabel("cache fraction")
            ax.grid(alpha=0.3)
        axes[0][0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
