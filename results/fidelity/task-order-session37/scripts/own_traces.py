"""Each live run's own trace replayed at its own storage, logged vs Spark's task order."""
import json, statistics, sys
from lrc.sim import simulate
from workloads.bench.replay import working_set_bytes
rows = []
for res in sys.argv[1:]:
    for r in json.load(open(res))["runs"]:
        if r.get("cache_fraction") is None or not r.get("trace") or r.get("hit_ratio") is None:
            continue
        ws, _, ct = working_set_bytes(r["trace"])
        f = r["storage_bytes_per_executor"] * 2 / ws
        p, adm = ("crd", True) if r["policy"] == "crd+admit" else (r["policy"], False)
        a = simulate(ct, p, f, executors=2, cores=1, refs="online", admit=adm).hit_ratio
        b = simulate(ct, p, f, executors=2, cores=1, refs="online", admit=adm, task_order="spark").hit_ratio
        rows.append((r["workload"], r["cache_fraction"], r["policy"], r["hit_ratio"], a, b, r.get("replay_hit_ratio")))
        print(f"{r['workload']} F={r['cache_fraction']} {r['policy']}: live {r['hit_ratio']:.3f} bench-replay {r.get('replay_hit_ratio') or 0:.3f} logged {a:.3f} spark {b:.3f}", flush=True)
for i, name in ((4, "logged"), (5, "spark")):
    d = [abs(x[3] - x[i]) for x in rows]
    print(name, "mean |live - replay|", round(statistics.mean(d), 4), "within 3 points", sum(v <= 0.03 for v in d), "of", len(d))
