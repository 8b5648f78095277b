"""Per event log: each executor's first task vs the median of its stage's other tasks."""
import sys, json, collections, statistics
import lrc.eventlog_files as F
for path in sys.argv[1:]:
    ev = []
    for f, n, line, ok in F.lines(F.eventlog_files(path), print):
        try: ev.append(json.loads(line))
        except Exception: pass
    tasks = collections.defaultdict(list); order = []
    for e in ev:
        if e["Event"] == "SparkListenerTaskEnd":
            ti = e["Task Info"]; d = (ti["Finish Time"] - ti["Launch Time"]) / 1000
            tasks[e["Stage ID"]].append((ti["Launch Time"], ti["Executor ID"], d, e["Task Metrics"].get("Executor Deserialize Time"), e["Task Metrics"].get("Executor Run Time")))
    seen = {}
    out = []
    for s in sorted(tasks, key=lambda s: min(t[0] for t in tasks[s])):
        for t in sorted(tasks[s]):
            k = seen.setdefault(t[1], 0); seen[t[1]] = k + 1
            if k < 2:
                others = [u[2] for u in tasks[s] if u is not t]
                out.append(f"exec {t[1]} task#{k} stage {s}: {t[2]:.3f}s (deser {t[3]}ms run {t[4]}ms) stage others median {statistics.median(others) if others else float('nan'):.3f} n={len(tasks[s])}")
    print(path.split('/')[-2], "\n  " + "\n  ".join(out))
