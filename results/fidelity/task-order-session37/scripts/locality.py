"""Per stage of an event log: the launch order of its tasks (index, executor, locality)."""
import json, sys
from collections import Counter, defaultdict
from lrc.eventlog_files import eventlog_files, lines

files = eventlog_files(sys.argv[1])
stages = defaultdict(list)
names = {}
for _, _, raw, _ in lines(files, print):
    e = json.loads(raw)
    ev = e.get("Event")
    if ev == "SparkListenerTaskStart":
        ti = e["Task Info"]
        stages[e["Stage ID"]].append((ti["Launch Time"], ti["Index"], ti["Executor ID"], ti["Locality"]))
    elif ev == "SparkListenerStageSubmitted":
        names[e["Stage Info"]["Stage ID"]] = e["Stage Info"]["Stage Name"]
tot = Counter()
for s, ts in sorted(stages.items()):
    c = Counter(t[3] for t in ts)
    tot.update(c)
    if len(sys.argv) > 2 or len(c) > 1 or "PROCESS_LOCAL" not in c:
        t0 = ts[0][0]
        seq = " ".join(f"{i}{'AB'[int(x)%2] if x.isdigit() else x}{l[0]}@{t-t0}" for t, i, x, l in ts[:40])
        print(f"stage {s} {names.get(s,'')[:30]!r} n={len(ts)} {dict(c)}: {seq}")
print(dict(tot))
