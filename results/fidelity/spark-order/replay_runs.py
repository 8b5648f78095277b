"""Replay each live run's own trace with the simulator as it is now, the way the benchmark does
(`workloads.bench.replay.own_run`: the run's policy, references, storage and admission): one
JSON line per run (workload, policy, F, live and replayed hit ratio).
`python replay_runs.py BENCH_DIR... > after.jsonl` (benchmark output folders with their traces;
session 29: /tmp/fl26/ml /tmp/s27/pagerank /tmp/s27/tpch /tmp/fl26/cc /tmp/fl26/zip
/tmp/s28/sql). `before.jsonl` is the same at 0ed7652, before replays took Spark's order."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from workloads.bench.replay import admit_of, own_run, storage_fraction  # noqa: E402
from workloads.bench.variants import variant_conf  # noqa: E402

for d in sys.argv[1:]:
    res = json.loads((Path(d) / "results.json").read_text())
    conf, settings = res.get("cluster", {}).get("conf"), res["settings"]
    for r in res["runs"]:
        if r.get("cache_fraction") is None or r["policy"] in ("plain", "unlimited") \
                or not r.get("stages_file") or r.get("hit_ratio") is None \
                or r.get("replay_fraction") is None:
            continue
        got = own_run(r["stages_file"].replace(".stages.json", ".parquet"),
                      variant_conf(r["policy"])[0], r["storage_bytes_per_executor"], 2, 1,
                      settings["refs"], storage_fraction(conf),
                      admit=admit_of(conf, r["policy"], settings.get("admit_default")))
        print(json.dumps({"w": r["workload"], "p": r["policy"], "f": r["cache_fraction"],
                          "live": r["hit_ratio"], "replay": got["replay_hit_ratio"]}), flush=True)
