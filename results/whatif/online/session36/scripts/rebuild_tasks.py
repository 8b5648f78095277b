"""From an event log with block updates (1 core per executor): per stage, task durations of tasks
that stored a block of RDD R again (rebuilt it after an eviction) against those that did not.
    python rebuilds.py LOGDIR RDD"""
import json, sys, statistics, collections
import lrc.eventlog_files as F
path, rdd = sys.argv[1], int(sys.argv[2])
pending = collections.defaultdict(int)
first = set()
rows = collections.defaultdict(lambda: {"rebuilt": [], "not": []})
for f, n, line, ok in F.lines(F.eventlog_files(path), print):
    try:
        e = json.loads(line)
    except Exception:
        continue
    ev = e.get("Event")
    if ev == "SparkListenerBlockUpdated":
        info = e["Block Updated Info"]
        bid = info["Block ID"]
        if bid.startswith(f"rdd_{rdd}_") and info.get("Memory Size", 0) + info.get("Disk Size", 0) > 0:
            ex = info["Block Manager ID"]["Executor ID"]
            if bid in first:
                pending[ex] += 1
            else:
                first.add(bid)
    elif ev == "SparkListenerTaskEnd":
        ti = e["Task Info"]
        ex = ti["Executor ID"]
        d = (ti["Finish Time"] - ti["Launch Time"]) / 1000
        rows[e["Stage ID"]]["rebuilt" if pending.pop(ex, 0) else "not"].append(d)
tot = 0
for s, r in sorted(rows.items()):
    if r["rebuilt"]:
        a, b = r["rebuilt"], r["not"]
        tot += len(a)
        print(f"stage {s}: rebuilt {len(a)} median {statistics.median(a):.3f}s | not {len(b)} median {statistics.median(b) if b else float('nan'):.3f}s")
print("tasks that rebuilt", tot)
