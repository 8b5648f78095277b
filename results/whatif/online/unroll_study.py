"""Replays of live runs' own traces under three unroll rules for blocks without an element count:
one element (the rule before session 28), values of 64 KiB (PySpark's pickled batches; the rule
since, for serialized levels), no unroll reservation. Per run: live hit ratio and the three
replays; per workload: the mean |replay - live|.

    python results/whatif/online/unroll_study.py BENCH_DIR...   (benchmark output folders with
    their traces; session 28: /tmp/fl26/ml /tmp/s27/pagerank /tmp/s27/tpch /tmp/fl26/cc
    /tmp/fl26/zip /tmp/s28/sql; output in unroll_study.txt)
"""
import json, sys, glob, statistics, math
from collections import defaultdict
from lrc.trace import load_trace
from lrc.compiled import CompiledTrace
from lrc.sim import simulate
from workloads.bench.replay import storage_fraction, admit_of
from workloads.bench.variants import variant_conf

dirs = sys.argv[1:]
err = defaultdict(lambda: defaultdict(list))
for d in dirs:
    res = json.load(open(f"{d}/results.json"))
    conf = res.get("cluster", {}).get("conf")
    sf = storage_fraction(conf)
    for r in res["runs"]:
        if r.get("cache_fraction") is None or r["policy"] in ("plain", "unlimited") or not r.get("stages_file"):
            continue
        if r.get("hit_ratio") is None or r.get("replay_fraction") is None:
            continue
        t = load_trace(r["stages_file"].replace(".stages.json", ".parquet"))
        pol = variant_conf(r["policy"])[0]
        adm = admit_of(conf, r["policy"], res["settings"].get("admit_default"))
        out = {}
        orig = t.unroll_threshold
        uncounted = [rdd for rdd in t.dag.rdds.values()
                     if rdd.cached and rdd.block_elements is None and rdd.block_bytes is not None]
        for rule in ("one", "batch64k", "none"):
            t.unroll_threshold = None if rule == "none" else orig
            for rdd in uncounted:
                bb = rdd.block_bytes if isinstance(rdd.block_bytes, (list, tuple)) \
                    else [rdd.block_bytes] * rdd.num_partitions
                rdd.block_elements = 1 if rule == "one" else [max(1, math.ceil(b / 65536)) for b in bb]
            ct = CompiledTrace(t)
            s = simulate(ct, pol, r["replay_fraction"], executors=2, cores=1, refs=res["settings"]["refs"],
                         storage_fraction=sf, admit=adm)
            out[rule] = s.hit_ratio
        for rdd in uncounted:
            rdd.block_elements = None
        t.unroll_threshold = orig
        w = r["workload"]
        for rule, h in out.items():
            err[w][rule].append(abs(h - r["hit_ratio"]))
        print(w, r["policy"], r["cache_fraction"], "live %.3f" % r["hit_ratio"], " ".join(f"{k} {v:.3f}" for k, v in out.items()), flush=True)
for w, e in err.items():
    print("MEAN |replay-live|", w, {k: round(statistics.mean(v), 3) for k, v in e.items()}, len(e["one"]), "runs")
