"""Task order in the replay, logged vs spark (session 36):

    python eval_task_order.py CALIB_TRACE_DIR ML_LIVE_RESULTS TPCH_PRESSURE_RESULTS

 (1) each live run's own trace (ml-live, tpch-pressure)
replayed at its own storage, against its live hit ratio; (2) the plugin-off calibration traces at
F = 0.3/0.5/0.7 (lru, crd+admit) against the live medians of results/latest/online and ml-live."""
import json, statistics, sys, glob
from collections import defaultdict
from workloads.bench.replay import working_set_bytes
from lrc.sim import simulate
from lrc.trace import load_trace
from lrc.compiled import CompiledTrace

def pol(p):
    return ("crd", True) if p == "crd+admit" else (p, False)

print("## own traces")
rows = []
for res in sys.argv[2:4]:
    for r in json.load(open(res))["runs"]:
        if r.get("cache_fraction") is None or not r.get("trace"):
            continue
        ws, _, ct = working_set_bytes(r["trace"])
        f = r["storage_bytes_per_executor"] * 2 / ws
        p, adm = pol(r["policy"])
        a = simulate(ct, p, f, executors=2, cores=1, refs="online", admit=adm).hit_ratio
        b = simulate(ct, p, f, executors=2, cores=1, refs="online", admit=adm, task_order="spark").hit_ratio
        rows.append((r["workload"], r["cache_fraction"], r["policy"], r["hit_ratio"], a, b))
        print(f"{r['workload']} F={r['cache_fraction']} {r['policy']}: live {r['hit_ratio']:.3f} logged {a:.3f} spark {b:.3f}")
print("mean |live - logged|", round(statistics.mean(abs(x[3]-x[4]) for x in rows), 4),
      "mean |live - spark|", round(statistics.mean(abs(x[3]-x[5]) for x in rows), 4))

print("## calibration traces vs live medians")
live = defaultdict(list)
for res in ("results/latest/online/results.json",):
    for r in json.load(open(res))["runs"]:
        if r.get("cache_fraction") is not None and r.get("hit_ratio") is not None and r.get("status", "ok") == "ok":
            live[(r["workload"], r["cache_fraction"], r["policy"])].append(r["hit_ratio"])
ml_live = defaultdict(list)
for r in json.load(open(sys.argv[2]))["runs"]:
    if r.get("cache_fraction") is not None:
        ml_live[(r["workload"], r["cache_fraction"], r["policy"])].append(r["hit_ratio"])
errs = {"logged": [], "spark": []}
for w in ("ml", "zip", "cc", "pagerank", "tpch", "sql"):
    tr = sys.argv[1] + f"/{w}-calib-lru.parquet"
    ws, _, ct = working_set_bytes(tr)
    for f in (0.3, 0.5, 0.7):
        for p in ("lru", "crd+admit"):
            src = ml_live if w == "ml" else live
            if not src.get((w, f, p)):
                continue
            m = statistics.median(src[(w, f, p)])
            q, adm = pol(p)
            a = simulate(ct, q, f, executors=2, cores=1, refs="online", admit=adm).hit_ratio
            b = simulate(ct, q, f, executors=2, cores=1, refs="online", admit=adm, task_order="spark").hit_ratio
            errs["logged"].append(abs(m - a)); errs["spark"].append(abs(m - b))
            print(f"{w} F={f} {p}: live {m:.3f} logged {a:.3f} spark {b:.3f}")
print({k: (round(statistics.mean(v), 4), sum(x <= 0.10 for x in v), len(v)) for k, v in errs.items()})
