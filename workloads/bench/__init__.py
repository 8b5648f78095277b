"""The benchmark runner: every workload under every policy at equal cache pressure, one fresh
driver process per run, plus simulator bounds, results.json, report.md and plots.

    python -m workloads.bench --workloads pagerank,cc,zip,sql --policies lru,lrc,lerc \\
        --cache-fraction 0.3,0.5,0.7 --repeat 3 --out results/latest
    python -m workloads.bench --render results/latest     # re-render report.md and the plots
    python -m workloads.bench --merge results/latest results/rerun   # fold in a re-run

Without `--master` a local standalone mini-cluster (`workloads.cluster.MiniCluster`) runs for the
whole benchmark and is torn down at the end (also on Ctrl-C); `--master spark://HOST:PORT` uses an
existing cluster (the docker-compose submitter).

Modules, one job each: `__main__` (the entry point), `cli` (flags), `settings` (what to measure,
checked), `target` (the cluster the runs go to), `runner` (calibration, runs, simulator replay),
`child` (one run in a fresh process), `store` (results.json), `stats` (medians and speedups),
`goals` (the targets, as data), `machine` (the machine, measured while it runs), `report`
(report.md and plots), `merge` (folding a re-run into a benchmark).
"""
from workloads.bench.cli import parser

__all__ = ["parser"]
