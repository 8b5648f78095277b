"""Per run and per tree: crd's job time over the mean of its invocation's two plugin-off runs,
table versions, the plugin's own CPU by part, and CPU by process (driver JVM, executors).
Usage: python summary.py [DIR] (default: this folder, subfolders old-N / new-N)."""
import glob
import json
import os
import statistics as st
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
print("run | jct s | ratio | versions | plugin cpu | table watch | table requests | brain calls |"
      " driver JVM cpu | executors cpu | checksum ok")
agg = {}
for d in sorted(glob.glob(f"{root}/*-[0-9]")):
    name = d.split("/")[-1]
    r = json.load(open(f"{d}/results.json"))
    off = st.mean(x["jct_s"] for x in r["runs"] if x["plugin"] in ("off", "off-b"))
    for x in r["runs"]:
        s = x["stats"]
        if not s:
            continue
        pc, cpu = s.get("plugin_cpu_s", {}), x.get("process_cpu") or {}
        row = (x["jct_s"] / off, pc.get("total"), cpu.get("driver_jvm_s"), cpu.get("executors_s"))
        agg.setdefault(name.split("-")[0], []).append(row)
        print(name, round(x["jct_s"], 1), round(x["jct_s"] / off, 3), s["table_version"],
              pc.get("total"), pc.get("table_watch"), pc.get("table_requests"),
              pc.get("brain_calls"), cpu.get("driver_jvm_s"), cpu.get("executors_s"),
              x["checksum"] == r["runs"][0]["checksum"])
for tree, rows in sorted(agg.items()):
    print(tree, "median ratio", round(st.median(a for a, *_ in rows), 3),
          "plugin cpu", [b for _, b, *_ in rows], "driver JVM", [c for *_, c, _ in rows],
          "executors", [d for *_, d in rows])
