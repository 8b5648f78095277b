"""Aggregate a JFR recording's execution samples: the share of samples with a spark-lrc
(org.sparklrc) frame anywhere on the stack, samples per thread, the top self frames and the
spark-lrc methods (inclusive).

    python results/overhead/mllib/jfr_summary.py FILE.jfr [N]

Needs the JDK's `jfr` tool ($JAVA_HOME/bin/jfr, else the one on PATH).
"""
import collections
import json
import os
import shutil
import subprocess
import sys


def jfr_tool() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "jfr")):
        return os.path.join(home, "bin", "jfr")
    return shutil.which("jfr") or "jfr"


def main() -> int:
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    out = subprocess.run([jfr_tool(), "print", "--json", "--stack-depth", "96",
                          "--events", "jdk.ExecutionSample", path],
                         capture_output=True, text=True, check=True).stdout
    events = json.loads(out)["recording"]["events"]
    inclusive, self_frames, threads, lrc_threads = (collections.Counter() for _ in range(4))
    with_lrc = 0
    for e in events:
        v = e["values"]
        frames = [f["method"]["type"]["name"] + "." + f["method"]["name"]
                  for f in v["stackTrace"]["frames"]]
        thread = (v.get("sampledThread") or {}).get("javaName") or "?"
        threads[thread.split("-")[0]] += 1
        if frames:
            self_frames[frames[0]] += 1
        ours = {f for f in frames if f.startswith("org.sparklrc")}
        if ours:
            with_lrc += 1
            lrc_threads[thread] += 1
        inclusive.update(ours)
    total = len(events)
    print(f"{path}: {total} samples; with an org.sparklrc frame: {with_lrc} "
          f"({100 * with_lrc / max(1, total):.1f}%)")
    print(" samples by thread (name up to the first '-'):", threads.most_common(8))
    print(" org.sparklrc samples by thread:", lrc_threads.most_common(6))
    print(" top self frames:")
    for m, c in self_frames.most_common(n):
        print(f"   {c:6d} {m}")
    print(" org.sparklrc methods (inclusive):")
    for m, c in inclusive.most_common(n):
        print(f"   {c:6d} {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
