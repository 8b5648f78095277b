"""CPU seconds per JVM thread group, from Java Flight Recorder files of a run.

Usage: python results/overhead/mllib/jfr/thread_cpu.py FILE.jfr [...]
Execution samples (shim_share.py) see Java frames only; this asks where a JVM's CPU goes by
thread, JIT compiler and GC threads included. JFR's `jdk.ThreadCPULoad` gives each thread's
user and system load (a share of the whole machine's CPUs) over the interval since that
thread's previous event; load x interval x CPUs is its CPU seconds. Threads named alike (digits
dropped) are one group. `jdk.CPULoad`'s jvmUser + jvmSystem, integrated the same way, is the
JVM's total; what the groups miss (GC threads, threads that ended between two events) is the
rest. Groups under 0.05 s are left out.
"""
from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
from datetime import datetime


def events(path: str, kind: str) -> list[dict]:
    out = subprocess.run(["jfr", "print", "--json", "--events", kind, path],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["recording"]["events"]


def when(v: dict) -> float:
    return datetime.fromisoformat(v["startTime"].replace("Z", "+00:00")).timestamp()


def group(name: str) -> str:
    return re.sub(r"\d+", "#", name or "?")


def main(paths: list[str]) -> None:
    cpus = os.cpu_count() or 1
    for path in paths:
        per: collections.Counter = collections.Counter()
        last: dict = {}
        for e in events(path, "jdk.ThreadCPULoad"):
            v = e["values"]
            t, th = when(v), v.get("eventThread") or {}
            key = th.get("javaThreadId") or th.get("osThreadId") or th.get("osName")
            name = th.get("javaName") or th.get("osName") or "?"
            if key in last:
                per[group(name)] += (v["user"] + v["system"]) * (t - last[key]) * cpus
            last[key] = t
        total, prev = 0.0, None
        for e in events(path, "jdk.CPULoad"):
            v = e["values"]
            t = when(v)
            if prev is not None:
                total += (v["jvmUser"] + v["jvmSystem"]) * (t - prev) * cpus
            prev = t
        print(f"== {path}: JVM CPU {total:.1f} s (jdk.CPULoad), by thread {sum(per.values()):.1f} s")
        for name, s in per.most_common():
            if s >= 0.05:
                print(f"  {s:7.2f} s  {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
