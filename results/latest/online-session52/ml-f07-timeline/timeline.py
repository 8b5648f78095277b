"""Where ml F = 0.7's extra wall time under crd goes, from Spark's event logs of one benchmark
run (one log per run, the policy the last word of its app name): per policy, the mean idle slot
time per stage (2 slots x the stage's wall time - its tasks' durations, stages differing by
> 0.1 s shown) and, per stage but the first, submission -> first task launch, last task end ->
stage completed (ms; mean, median, count).

    python results/latest/online-session52/ml-f07-timeline/timeline.py EVENTLOG_DIR
"""
import collections
import glob
import statistics
import sys

from lrc.eventlog_files import stage_timeline

idle = collections.defaultdict(lambda: collections.defaultdict(float))
gaps = collections.defaultdict(lambda: collections.defaultdict(list))
runs = collections.Counter()
for d in sorted(glob.glob(sys.argv[1] + "/*")):
    name, sub, comp, stages = stage_timeline(d)
    name = name.split("-")[-1]
    tasks = {s: [(launch, finish) for launch, finish, _ in ts] for s, ts in stages.items()}
    runs[name] += 1
    for s, ts in tasks.items():
        idle[name][s] += (2 * (comp[s] - sub[s]) - sum(f - l for l, f in ts)) / 1000
        if s:  # the first stage's launch waits for the executors' start
            gaps[name]["submit->launch"].append(min(l for l, _ in ts) - sub[s])
            gaps[name]["end->completed"].append(comp[s] - max(f for _, f in ts))
pols = sorted(runs)
print("idle slot s per stage:", "stage", *[f"{p}({runs[p]})" for p in pols])
for s in sorted({s for p in pols for s in idle[p]}):
    row = [idle[p][s] / runs[p] for p in pols]
    if max(row) - min(row) > 0.1:
        print(s, *[f"{x:.2f}" for x in row])
print("total", *[f"{sum(idle[p].values()) / runs[p]:.2f}" for p in pols])
for p in pols:
    print(p, {k: (round(statistics.mean(v), 1), statistics.median(v), len(v))
              for k, v in gaps[p].items()})
