"""Where a benchmark run's time goes, stage by stage, from Spark's own event logs.

Run the benchmark with `--conf spark.eventLog.enabled=true --conf spark.eventLog.dir=EV`, then
`python stage_times.py RESULTS_JSON EV`: one line per run (job span, summed task metrics) and, per
stage group of pagerank, the summed executor run time per run and policy. Event logs are matched
to runs by order (the benchmark runs one application at a time: calibration first, then `runs`).
"""
import collections
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from lrc.eventlog_files import eventlog_files, lines  # noqa: E402

# pagerank.py with 4 iterations: stage 0 builds links; each iteration's job has a shuffle-map
# stage (reads links and ranks_i-1 from the cache) and a result stage (stores ranks_i).
GROUPS = {"stage 0": (0,), "shuffle-map (cache reads)": (2, 7, 13, 20),
          "result (ranks_i stored)": (3, 8, 14, 21)}


def events(app: Path) -> list[dict]:
    return [json.loads(line) for _, _, line, _ in lines(eventlog_files(app, print), print)]


def summarize(evs: list[dict]) -> tuple[dict, dict]:
    jobs, tasks = {}, []
    for e in evs:
        kind = e["Event"]
        if kind == "SparkListenerJobStart":
            jobs[e["Job ID"]] = [e["Submission Time"], None]
        elif kind == "SparkListenerJobEnd":
            jobs[e["Job ID"]][1] = e["Completion Time"]
        elif kind == "SparkListenerTaskEnd":
            ti, m = e["Task Info"], e.get("Task Metrics") or {}
            tasks.append({"stage": e["Stage ID"], "run": m.get("Executor Run Time", 0),
                          "des": m.get("Executor Deserialize Time", 0),
                          "gc": m.get("JVM GC Time", 0),
                          "fetch": (m.get("Shuffle Read Metrics") or {}).get("Fetch Wait Time", 0),
                          "cpu": m.get("Executor CPU Time", 0) / 1e6})
    js = [v for _, v in sorted(jobs.items())]
    line = {"span_ms": js[-1][1] - js[0][0],
            "gaps_ms": sum(js[i + 1][0] - js[i][1] for i in range(len(js) - 1)),
            **{k: round(sum(t[k] for t in tasks)) for k in ("run", "cpu", "des", "gc", "fetch")}}
    by_stage = collections.defaultdict(int)
    for t in tasks:
        by_stage[t["stage"]] += t["run"]
    return line, by_stage


def main(results: str, evdir: str) -> None:
    runs = json.loads(Path(results).read_text())["runs"]
    apps = sorted(Path(evdir).glob("eventlog_v2_*"))
    labels = ["calibration"] * (len(apps) - len(runs)) + [f"{r['policy']} r{r['repeat']}" for r in runs]
    groups = collections.defaultdict(lambda: collections.defaultdict(list))
    for label, app in zip(labels, apps):
        line, by_stage = summarize(events(app))
        print(f"{label:16}", " ".join(f"{k}={v}" for k, v in line.items()))
        if label != "calibration":
            for name, stages in GROUPS.items():
                groups[name][label.split()[0]].append(sum(by_stage[s] for s in stages))
    for name, by_policy in groups.items():
        for policy, xs in by_policy.items():
            print(f"{name:28} {policy:10} median {statistics.median(xs):6.0f} ms  runs {xs}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
