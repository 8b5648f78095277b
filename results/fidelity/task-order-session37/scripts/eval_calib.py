"""Calibration traces (plugin off, ample memory) replayed at F = 0.3/0.5/0.7 under lru and
crd+admit in each task order, against the live medians (results/latest/online; ml: session 36's
ml-live):  python eval_calib.py logged,spark ml,cc,zip,pagerank,tpch,sql CALIB_DIR"""
import json, statistics, sys
from collections import defaultdict
from lrc.sim import simulate
from workloads.bench.replay import working_set_bytes
VARIANTS = sys.argv[1].split(",")
CALIB = sys.argv[3]  # CALIB/cal-W/traces/W-calib-lru.parquet


def run(ct, policy, f, order, adm=False):
    return simulate(ct, policy, f, executors=2, cores=1, refs="online", admit=adm, task_order=order).hit_ratio
live = defaultdict(list)
for res, only in (("results/latest/online/results.json", None), ("results/whatif/online/session36/ml-live/results.json", "ml")):
    for r in json.load(open(res))["runs"]:
        if r.get("cache_fraction") is not None and r.get("hit_ratio") is not None and r.get("status", "ok") == "ok":
            if (r["workload"] == "ml") == (only == "ml"):
                live[(r["workload"], r["cache_fraction"], r["policy"])].append(r["hit_ratio"])
errs = defaultdict(list)
per = defaultdict(lambda: defaultdict(list))
for w in sys.argv[2].split(","):
    ws, _, ct = working_set_bytes(f"{CALIB}/cal-{w}/traces/{w}-calib-lru.parquet")
    for f in (0.3, 0.5, 0.7):
        for p in ("lru", "crd+admit"):
            if not live.get((w, f, p)):
                continue
            m = statistics.median(live[(w, f, p)])
            q, adm = ("crd", True) if p == "crd+admit" else (p, False)
            out = {v: round(run(ct, q, f, v, adm), 3) for v in VARIANTS}
            for v, h in out.items():
                errs[v].append(abs(m - h)); per[w][(v, p)].append(abs(m - h))
            print(w, f, p, "live", round(m, 3), out, flush=True)
print({v: (round(statistics.mean(e), 4), sum(x <= 0.10 for x in e), len(e)) for v, e in errs.items()})
for w in per:
    print(w, {f"{v}/{p}": round(statistics.mean(e), 3) for (v, p), e in per[w].items()})
