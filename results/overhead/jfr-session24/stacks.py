"""Driver-JVM execution samples that run spark-lrc code, from JFR recordings (session 24).

python stacks.py FILE.jfr ...: per file, the samples with an org.sparklrc frame on the stack,
grouped by (thread, outermost spark-lrc frame, top frame)."""
import collections
import json
import re
import subprocess
import sys


def load(f, ev):
    out = subprocess.run(["jfr", "print", "--json", "--events", ev, f],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["recording"]["events"]


def main():
    for f in sys.argv[1:]:
        samples = load(f, "jdk.ExecutionSample")
        ours = collections.Counter()
        for e in samples:
            frames = e["values"]["stackTrace"]["frames"]
            t = e["values"]["sampledThread"]
            thread = re.sub(r"\d+", "#", t.get("javaName") or "?")
            types = [x["method"]["type"]["name"] for x in frames]
            names = [ty.split("/")[-1] + "." + x["method"]["name"] for ty, x in zip(types, frames)]
            lrc = [n for n, ty in zip(names, types) if "sparklrc" in ty]
            if lrc:
                ours[(thread, lrc[-1], names[0])] += 1
        print(f"{f}: {len(samples)} samples, {sum(ours.values())} with spark-lrc frames")
        for k, c in ours.most_common(25):
            print(f"  {c:4d} {k}")


if __name__ == "__main__":
    main()
