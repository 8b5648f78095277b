"""Where the shim's JVM time goes, from Java Flight Recorder files of a run.

Usage: python results/overhead/mllib/jfr/shim_share.py FILE.jfr [...]
For each file: execution samples in all, those with an `org.sparklrc` frame (inclusive), by the
outermost shim frame (which hook), what the hottest hook calls, and the JIT compilations (over
JFR's threshold) of shim or Jackson code. Reads `jfr print` output (the JDK's own tool).
"""
from __future__ import annotations

import collections
import re
import subprocess
import sys

FRAME = re.compile(r"^\s+([\w$.<>]+)\(", re.M)
DURATION = re.compile(r"duration = ([\d.]+) (s|ms|us)")


def events(path: str, kind: str) -> list[str]:
    out = subprocess.run(["jfr", "print", "--events", kind, "--stack-depth", "64", path],
                         capture_output=True, text=True, check=True).stdout
    return out.split(f"{kind} {{")[1:]


def main(paths: list[str]) -> None:
    for path in paths:
        samples = events(path, "jdk.ExecutionSample")
        hooks, leaves, shim = collections.Counter(), collections.Counter(), 0
        for ev in samples:
            frames = FRAME.findall(ev)
            ours = [i for i, fr in enumerate(frames) if fr.startswith("org.sparklrc")]
            if ours:
                shim += 1
                hooks[frames[ours[-1]]] += 1
                leaves[frames[0].rsplit(".", 1)[0]] += 1
        comp = [ev for ev in events(path, "jdk.Compilation")]
        secs = lambda evs: sum(float(m.group(1)) * {"s": 1, "ms": 1e-3, "us": 1e-6}[m.group(2)]  # noqa: E731
                               for ev in evs if (m := DURATION.search(ev)))
        ours_comp = [ev for ev in comp if "org.sparklrc" in ev or "jackson" in ev]
        print(f"== {path}: {len(samples)} samples, {shim} with shim frames "
              f"({100 * shim / max(1, len(samples)):.1f}%); compilations {len(comp)} "
              f"({secs(comp):.1f} s), of shim/Jackson code {len(ours_comp)} ({secs(ours_comp):.2f} s)")
        for hook, n in hooks.most_common(6):
            print(f"   {n:5d}  {hook}")
        print("   leaf classes under shim frames:",
              ", ".join(f"{k} {v}" for k, v in leaves.most_common(6)))


if __name__ == "__main__":
    main(sys.argv[1:])
