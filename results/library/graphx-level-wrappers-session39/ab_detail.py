"""Per run of the A/B: the final job's stage 183 (sum at PageRank.scala:504) run time, rdd_159's
misses and its evictions (stage, priority), from each run's stages and stats files."""
import json, glob
for d in sorted(glob.glob("/tmp/ab39/*-*/")):
    run = d.split("/")[3]
    stages = json.load(open(d + "traces/graphx_pagerank-f0.5-crd-r0.stages.json"))
    stats = json.load(open(d + "traces/graphx_pagerank-f0.5-crd-r0.stats.json"))
    s183 = [x["executor_run_time_ms"] / 1000 for x in stages if x["stage"] == 183]
    ev = [(e["stage"], e["priority"]) for e in stats["recent_evictions"] if e["block"].startswith("rdd_159_")]
    print(f"{run}: stage 183 run time {s183[0] if s183 else '-'} s; tasks' run time summed "
          f"{sum(x['executor_run_time_ms'] for x in stages) / 1000:.1f} s; misses of rdd_159 "
          f"{stats['misses_per_rdd'].get('159', 0)}, of rdd_170 {stats['misses_per_rdd'].get('170', 0)}; "
          f"rdd_159 evicted at (stage, priority) {ev}")
