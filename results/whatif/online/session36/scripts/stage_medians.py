import json, sys, statistics, collections
import lrc.eventlog_files as F
def meds(path):
    d = collections.defaultdict(list)
    for f, n, line, ok in F.lines(F.eventlog_files(path), print):
        try: e = json.loads(line)
        except Exception: continue
        if e.get("Event") == "SparkListenerTaskEnd":
            ti = e["Task Info"]; d[e["Stage ID"]].append((ti["Finish Time"] - ti["Launch Time"]) / 1000)
    return {s: statistics.median(v) for s, v in d.items()}
plain, press = meds(sys.argv[1]), meds(sys.argv[2])
stages = [int(s) for s in sys.argv[3].split(",")]
diffs = [press[s] - plain[s] for s in stages]
for s, dd in zip(stages, diffs): print(s, f"plain {plain[s]:.3f} pressure {press[s]:.3f} +{dd:.3f}")
print("median extra per task", f"{statistics.median(diffs):.3f}")
