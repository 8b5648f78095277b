"""The command line of `python -m workloads.bench`: its flags and their parsing into Settings.
The flags are the interface dev/run, docker-compose and recorded commands (merge) rely on."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Iterable

from workloads.bench.settings import REFS, Settings
from workloads.bench.variants import BENCH_SUFFIXES, described
from workloads.cluster import ROOT


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m workloads.bench",
                                 description="The benchmark runner: every workload under every "
                                             "policy at equal cache pressure.")
    ap.add_argument("--workloads", default="pagerank,cc,zip,sql")
    ap.add_argument("--policies", default="lru,lrc,lerc,crd",
                    help=f"live policies, each optionally with {described(BENCH_SUFFIXES)} "
                         "(e.g. crd+noadmit), and plain (Spark without spark-lrc)")
    ap.add_argument("--cache-fraction", default="0.3,0.5,0.7",
                    help="storage memory relative to the workload's cached working set")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "results" / "latest"))
    ap.add_argument("--scale", default="", help="per workload: pagerank=2,cc=1 (default 1)")
    ap.add_argument("--kw", action="append", default=[],
                    help="workload arguments: pagerank.iterations=5,zip.rounds=4 (repeatable)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--master", default=None, help="spark://HOST:PORT; default: a local mini-cluster")
    ap.add_argument("--workers", type=int, default=2, help="mini-cluster workers (= executors)")
    ap.add_argument("--worker-memory", default="1g")
    ap.add_argument("--executor-memory", default=None,
                    help="default: what fits the mini-cluster's workers, 1g with --master")
    ap.add_argument("--conf", action="append", default=[],
                    help="extra Spark conf KEY=VALUE for every run (repeatable)")
    ap.add_argument("--refs", choices=REFS, default="online",
                    help="profile: the calibration trace is spark.lrc.profile (recurring app)")
    ap.add_argument("--verify", action="store_true",
                    help="let the workloads run their driver-side self-checks in every run")
    ap.add_argument("--run-timeout", type=float, default=900.0)
    ap.add_argument("--no-sim", action="store_true", help="skip the simulator replay")
    ap.add_argument("--no-unlimited", action="store_true",
                    help="skip the repeated unlimited-memory cell (plugin off, ample memory); the "
                         "report then falls back to the calibration's single plugin-off run")
    ap.add_argument("--render", metavar="DIR", default=None,
                    help="only re-render DIR/report.md and plots from DIR/results.json")
    ap.add_argument("--merge", nargs=2, metavar=("DIR", "SRC"), default=None,
                    help="replace DIR's results for SRC's workloads by SRC's (a re-run of some "
                         "workloads), keep the commands that still contribute, re-render DIR")
    ap.add_argument("--resim", nargs=2, metavar=("DIR", "WORKLOADS"), default=None,
                    help="replay DIR's recorded traces of WORKLOADS (comma-separated) again with "
                         "the simulator as it is now: the simulator rows and every run's "
                         "replay_* fields; re-render DIR")
    return ap


def parse_list(s: str) -> list[str]:
    return [x.strip() for x in s.split(",") if x.strip()]


def parse_scales(s: str) -> dict[str, int]:
    out = {}
    for item in parse_list(s):
        name, _, val = item.partition("=")
        if not val:
            raise SystemExit(f"--scale: expected W=N, got {item!r}")
        out[name.strip()] = int(val)
    return out


def _value(v: str) -> Any:
    try:
        return json.loads(v)
    except ValueError:
        return v


def parse_kwargs(items: Iterable[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in (x for s in items for x in parse_list(s)):
        key, _, val = item.partition("=")
        wl, _, arg = key.partition(".")
        if not (arg and val):
            raise SystemExit(f"--kw: expected W.arg=value, got {item!r}")
        out.setdefault(wl.strip(), {})[arg.strip()] = _value(val.strip())
    return out


def parse_conf(items: Iterable[str]) -> dict[str, str]:
    """`--conf KEY=VALUE` flags -> a dict; anything else is a usage error naming it."""
    out = {}
    for item in items:
        k, sep, v = item.partition("=")
        if not sep or not k.strip():
            raise SystemExit(f"--conf wants KEY=VALUE, got {item!r}")
        out[k.strip()] = v.strip()
    return out


def settings(a: argparse.Namespace) -> Settings:
    """The runner's Settings from parsed flags (checked by Settings itself)."""
    return Settings(out=Path(a.out).resolve(), workloads=parse_list(a.workloads),
                    policies=parse_list(a.policies),
                    fractions=[float(x) for x in parse_list(a.cache_fraction)], repeat=a.repeat,
                    scales=parse_scales(a.scale), kwargs=parse_kwargs(a.kw), seed=a.seed,
                    refs=a.refs, verify=a.verify, run_timeout=a.run_timeout,
                    simulate=not a.no_sim, unlimited=not a.no_unlimited)
