"""Same-day what-if vs live: each workload's own plugin-off calibration log (the first in
EVROOT/ev-W) replayed at the live runs' median storage bytes per executor, beside the live
medians of BENCHROOT/W/results.json, under three model versions:
  logged+allwarm   session 36: logged task order, a rebuild at the median of all warm tasks
  spark+allwarm    Spark's task order (lrc.task_order)
  spark+late       and a rebuild at the later half of each executor's warm tasks (derive.warm_cost)
    python sameday.py ml,tpch,cc EVROOT BENCHROOT OUT"""
import glob, json, math, statistics, sys
from collections import defaultdict
from pathlib import Path
from statistics import median
import lrc.derive as derive
from lrc.whatif import parse_sizes, run_whatif
from lrc.whatif_report import write_report

LATE = derive.warm_cost


def all_warm(shares):  # the rule before session 37
    warm = [t for t, cold, _ in shares if not cold]
    return median(warm or [t for t, _, _ in shares])


VERSIONS = {"logged+allwarm": ("logged", all_warm), "spark+allwarm": ("spark", all_warm),
            "spark+late": ("spark", LATE)}
ws_, ev, bench, out = sys.argv[1].split(","), sys.argv[2], sys.argv[3], Path(sys.argv[4])
summary = defaultdict(list)
for w in ws_:
    runs = json.load(open(f"{bench}/{w}/results.json"))["runs"]
    cells = defaultdict(lambda: {"hit": [], "jct": [], "bytes": []})
    unl = []
    for r in runs:
        if r.get("workload") != w or not r.get("checksum_ok", True) or r.get("status", "ok") != "ok":
            continue
        if r.get("cache_fraction") is None:
            if r["policy"] == "unlimited" and r.get("jct_s"):
                unl.append(r["jct_s"])
            continue
        c = cells[(r["cache_fraction"], r["policy"])]
        c["hit"].append(r["hit_ratio"]); c["jct"].append(r["jct_s"]); c["bytes"].append(r["storage_bytes_per_executor"])
    fr = sorted({f for f, _ in cells})
    byts = {f: int(median(cells[(f, "lru")]["bytes"])) for f in fr}
    log = sorted(glob.glob(f"{ev}/ev-{w}/*"))[0]
    sizes = parse_sizes(",".join(f"{b}b" for b in byts.values()))
    print(f"## {w}: log {Path(log).name}; live unlimited (plugin off, ample memory) median "
          f"{median(unl):.1f} s of {len(unl)} runs {sorted(round(x, 1) for x in unl)}")
    print("| F | policy | live hit | live JCT s [range] | " + " | ".join(f"{v} hit / est s (x live)" for v in VERSIONS) + " |")
    print("|---|---|---|---|" + "---|" * len(VERSIONS))
    res = {}
    for v, (order, rule) in VERSIONS.items():
        derive.warm_cost = rule
        try:
            res[v] = run_whatif(log, sizes, ["lru", "crd"], refs="online", task_order=order, progress=False)
        finally:
            derive.warm_cost = LATE
        write_report(res[v], out / v / w, f"python -m lrc whatif {log} --cache-sizes {','.join(f'{b}b' for b in byts.values())} --policies lru,crd --refs online --task-order {order}")
    for f in fr:
        for p in ("lru", "crd+admit"):
            c = cells[(f, p)]
            if not c["hit"]:
                continue
            lh, lt = median(c["hit"]), median(c["jct"])
            cols = []
            for v in VERSIONS:
                row = next(r for r in res[v].rows if r["policy"] == ("crd" if p == "crd+admit" else "lru")
                           and abs(r["per_executor_bytes"] - byts[f]) <= 1)
                cols.append(f"{row['hit_ratio']:.3f} / {row['est_runtime']:.1f} ({row['est_runtime'] / lt:.2f})")
                summary[v].append((abs(row["hit_ratio"] - lh), row["est_runtime"] / lt))
            print(f"| {f} | {p} | {lh:.3f} | {lt:.1f} [{min(c['jct']):.1f}-{max(c['jct']):.1f}] | " + " | ".join(cols) + " |")
    print(f"\nunlimited estimate (the log's span): {res['spark+late'].unlimited_time:.1f} s\n")
print("## Summary over every cell")
for v, xs in summary.items():
    r = [x[1] for x in xs]
    print(f"- {v}: mean |hit - live| {statistics.mean(x[0] for x in xs):.3f}; est / live "
          f"{min(r):.2f}-{max(r):.2f}, mean |log| {statistics.mean(abs(math.log(x)) for x in r):.3f}")
