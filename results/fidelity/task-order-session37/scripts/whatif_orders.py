"""The what-if of each calibration event log at the live runs' storage bytes, in each task
order, beside the live medians:  python whatif_orders.py ml,cc,zip,pagerank,tpch,sql EVROOT OUT
(EVROOT/ev-W: workload W's event logs, the first the plugin-off calibration run)."""
import json, statistics, sys, glob
from collections import defaultdict
from lrc.whatif import parse_sizes, run_whatif
from lrc.whatif_report import write_report
LIVE = {"ml": "results/whatif/online/session36/ml-live/results.json"}
out = {}
for w in sys.argv[1].split(","):
    live = json.load(open(LIVE.get(w, "results/latest/online/results.json")))["runs"]
    cells = defaultdict(lambda: {"hit": [], "jct": [], "bytes": []})
    for r in live:
        if r.get("workload") == w and r.get("cache_fraction") is not None and r.get("hit_ratio") is not None \
                and r["policy"] in ("lru", "crd+admit") and r.get("status", "ok") == "ok" and r.get("checksum_ok", True):
            c = cells[(r["cache_fraction"], r["policy"])]
            c["hit"].append(r["hit_ratio"]); c["jct"].append(r["jct_s"]); c["bytes"].append(r["storage_bytes_per_executor"])
    fr = sorted({f for f, _ in cells})
    byts = {f: int(statistics.median(cells[(f, "lru")]["bytes"])) for f in fr}
    log = sorted(glob.glob(f"{sys.argv[2]}/ev-{w}/*"))[0]
    sizes = parse_sizes(",".join(f"{b}b" for b in byts.values()))
    for order in ("logged", "spark"):
        res = run_whatif(log, sizes, ["lru", "crd"], refs="online", task_order=order, progress=False)
        write_report(res, __import__("pathlib").Path(f"{sys.argv[3]}/whatif-{order}/{w}"), f"python -m lrc whatif {log} --cache-sizes ... --policies lru,crd --refs online --task-order {order}")
        for row in res.rows:
            f = min(byts, key=lambda f: abs(byts[f] - row["per_executor_bytes"]))
            p = "crd+admit" if row["policy"] == "crd" else "lru"
            c = cells[(f, p)]
            if not c["hit"]:
                continue
            lh, lt = statistics.median(c["hit"]), statistics.median(c["jct"])
            out[(w, f, p, order)] = (row["hit_ratio"], row["est_runtime"], lh, lt)
            print(w, f, p, order, f"hit {row['hit_ratio']:.3f} live {lh:.3f}  est {row['est_runtime']:.1f}s live {lt:.1f}s x{row['est_runtime']/lt:.2f}", flush=True)
for order in ("logged", "spark"):
    v = [x for k, x in out.items() if k[3] == order]
    print(order, "mean |hit-live|", round(statistics.mean(abs(a - c) for a, b, c, d in v), 4),
          "est/live range", round(min(b / d for a, b, c, d in v), 2), round(max(b / d for a, b, c, d in v), 2),
          "mean |log(est/live)|", round(statistics.mean(abs(__import__('math').log(b / d)) for a, b, c, d in v), 3))
json.dump({"|".join(map(str, k)): v for k, v in out.items()}, open(f"{sys.argv[3]}/whatif_orders.json", "w"), indent=1)
