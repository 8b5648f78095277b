"""Replay the `crd+nostate` runs of results.json with the rule off in the simulator too (the
benchmark's replay always applies it: `spark.lrc.stateRead` is not read there), so that their
live-vs-replay diff compares like with like. One-off: the Planner's default is patched here.

    python results/fidelity/state-session34/replay_nostate.py /tmp/s34/fid
"""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
import lrc.planner  # noqa: E402
from workloads.bench.replay import admit_of, own_run, storage_fraction  # noqa: E402
from workloads.bench.variants import variant_conf  # noqa: E402

init = lrc.planner.Planner.__init__
lrc.planner.Planner.__init__ = lambda self, *a, **k: init(self, *a, **{**k, "state_read": False})
res = json.loads((Path(sys.argv[1]) / "results.json").read_text())
conf, settings = res.get("cluster", {}).get("conf"), res["settings"]
diffs: dict[str, list[float]] = {}
for r in res["runs"]:
    if r.get("policy") != "crd+nostate" or r.get("hit_ratio") is None or not r.get("stages_file"):
        continue
    got = own_run(r["stages_file"].replace(".stages.json", ".parquet"),
                  variant_conf(r["policy"])[0], r["storage_bytes_per_executor"], 2, 1,
                  settings["refs"], storage_fraction(conf),
                  admit=admit_of(conf, r["policy"], settings.get("admit_default")))
    diffs.setdefault(r["workload"], []).append(100 * (r["hit_ratio"] - got["replay_hit_ratio"]))
    print(r["workload"], r["repeat"], f"live {r['hit_ratio']:.3f}",
          f"replay (rule off) {got['replay_hit_ratio']:.3f}")
for w, d in diffs.items():
    print(w, "crd+nostate diff median %.1f points" % statistics.median(d), [round(x, 1) for x in d])
