"""Where a benchmark's cached partitions ran, from Spark's event logs (one log per run, the
policy the last word of its app name): per run, the stages (all but the first) whose 4 tasks
ran 3 to 1 on the two executors, and the idle executor time at their ends (stage completion -
each executor's last task end, summed), the executors' busy time, and their time from stage
submission to first launch (seconds).

    python results/admission/store-rank-session53/placement.py EVENTLOG_DIR
"""
import collections
import glob
import sys

from lrc.eventlog_files import stage_timeline

for d in sorted(glob.glob(sys.argv[1] + "/*")):
    name, sub, comp, tasks = stage_timeline(d)
    name = name.split("-")[-1]
    start = tail = busy = 0
    uneven = 0
    for s, ts in tasks.items():
        if s == 0:  # the first stage waits for the executors' start
            continue
        per = collections.defaultdict(list)
        for launch, finish, x in ts:
            per[x].append((launch, finish))
        uneven += max(len(v) for v in per.values()) > (len(ts) + 1) // 2
        for v in per.values():
            v.sort()
            start += v[0][0] - sub[s]
            tail += comp[s] - v[-1][1]
            busy += sum(f - launch for launch, f in v)
    print(f"{name}: stages uneven {uneven} of {len(tasks) - 1}; idle at stage ends "
          f"{tail / 1000:.2f} s, before first launch {start / 1000:.2f} s, busy {busy / 1000:.2f} s")
