"""``python -m lrc simulate ...``, ``python -m lrc whatif EVENTLOG ...``,
``python -m lrc bench-speed`` and ``python -m lrc gpu-study``."""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from lrc.bound import hit_bound
from lrc.policies import ADMIT_MODES, POLICIES, admits, get_policy
from lrc.sim import REFS, CompiledTrace, simulate
from lrc.synth import WORKLOADS, make
from lrc.task_order import TASK_ORDERS, order_for
from lrc.trace import load_trace
from lrc.unroll import threshold_of


def _floats(s: str) -> list[float]:
    try:
        vals = [float(x) for x in s.split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of numbers: {s!r}") from None
    if not vals or any(not 0 < v for v in vals):
        raise argparse.ArgumentTypeError("cache fractions must be > 0")
    return vals


def _policies(s: str) -> list[str]:
    names = [x.strip() for x in s.split(",") if x.strip()]
    for n in names:
        try:
            get_policy(n)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return names


def _sizes(s: str):
    from lrc.whatif import parse_sizes

    try:
        return parse_sizes(s)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _unroll(s: str) -> int:
    try:
        return threshold_of({"spark.storage.unrollMemoryThreshold": s})
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _storage_fraction(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {s!r}") from None
    if not 0 <= v < 1:
        raise argparse.ArgumentTypeError("must be in [0, 1)")
    return v


def _positive(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {s!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return v


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m lrc")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("simulate", help="replay traces under policies and cache sizes")
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--workload", help=f"built-in: {', '.join(WORKLOADS)} or all")
    src.add_argument("--trace", type=Path,
                     help="a trace file (.parquet or .json) or a Spark event log (file or "
                          "rolling eventlog_v2_* directory)")
    s.add_argument("--policies", type=_policies, default=list(POLICIES),
                   help=f"comma-separated, from {', '.join(POLICIES)}")
    s.add_argument("--cache-fraction", type=_floats, default=[0.3, 0.5, 0.7],
                   help="cluster cache / cached working set (peak bytes cached at once); comma-separated")
    s.add_argument("--executors", type=int, default=4)
    s.add_argument("--cores", type=int, default=2, help="cores per executor (runtime model)")
    s.add_argument("--refs", choices=REFS, default="profile",
                   help="reference counts from the whole trace (recurring app), job by job with "
                        "predicted references for later jobs (online), or job by job only (blind)")
    s.add_argument("--peer-mode", choices=("task", "stage"), default="task")
    s.add_argument("--storage-fraction", type=_storage_fraction, default=None,
                   help="spark.memory.storageFraction of the run: the share of memory the "
                        "tasks' execution memory cannot take from the cache (default: the "
                        "trace's, else Spark's 0.5; lrc/execmem.py)")
    s.add_argument("--unroll-threshold", type=_unroll, default=None, metavar="BYTES",
                   help="spark.storage.unrollMemoryThreshold of the run (bytes): replay the "
                        "unroll memory each store reserves first (lrc/unroll.py; default: "
                        "the trace's, and without one a store needs only its block's size)")
    s.add_argument("--admit", choices=ADMIT_MODES, nargs="?", const="true", default="false",
                   help="a store never evicts a block the policy ranks above the block being "
                        "stored, it fails instead (the executors' spark.lrc.admit): --admit or "
                        "--admit true for every policy but lru, --admit auto as spark.lrc.admit's "
                        "default sets it live (crd only); default false: the ranking rules alone")
    s.add_argument("--task-order", choices=TASK_ORDERS, default="logged",
                   help="each stage's tasks as logged (default) or in the order Spark's "
                        "scheduler gives them from what the replay caches (a trace recorded "
                        "with other memory); min and the bound keep the logged order")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--json", type=Path, help="write results as JSON here")
    s.add_argument("--report", type=Path, help="write report.md and hit_ratio.png into this dir")
    w = sub.add_parser("whatif", help="replay a Spark event log under each policy and cache "
                                      "size; report and cache-size recommendation")
    w.add_argument("eventlog", type=Path, help="a Spark event log: file (plain, .zstd, .lz4, "
                                               ".snappy) or rolling eventlog_v2_* directory")
    w.add_argument("--cache-sizes", type=_sizes, default=None,
                   help="comma-separated: fractions of the cached working set (0.5) and/or bytes "
                        "per executor (512m, 2g); default 0.1,0.2,0.3,0.5,0.7,1.0")
    w.add_argument("--policies", type=_policies, default=None,
                   help="comma-separated; default lru,lrc,lerc,mrd,crd")
    w.add_argument("--executors", type=_positive, default=None,
                   help="executors to replay on (default: as many as the log's tasks ran on)")
    w.add_argument("--cores", type=_positive, default=None,
                   help="cores per executor (default: from the log)")
    w.add_argument("--refs", choices=REFS, default="profile",
                   help="where reference counts come from (profile: the application recurs)")
    w.add_argument("--admit", choices=ADMIT_MODES, default="auto",
                   help="admission as spark.lrc.admit sets it live: auto (default: on for crd, "
                        "the plugin's default policy), true (every policy but lru), false")
    w.add_argument("--task-order", choices=TASK_ORDERS, default="spark",
                   help="each stage's tasks in the order Spark's scheduler gives them from what "
                        "the replay caches (spark, default) or as logged")
    w.add_argument("--out", type=Path, default=Path("whatif"),
                   help="write report.md, whatif.png, results.json here (default ./whatif)")
    w.add_argument("--jobs", type=_positive, default=None,
                   help="processes for the replays (default: one per core; the results do not "
                        "depend on it)")
    b = sub.add_parser("bench-speed", help="simulator throughput on a >= 1M-access trace")
    b.add_argument("--accesses", type=int, default=1_000_000)
    b.add_argument("--policies", type=_policies, default=list(POLICIES))
    b.add_argument("--out", type=Path, help="write the markdown summary here")
    b.add_argument("--profile", action="store_true", help="print a cProfile of each run")
    b.add_argument("--cache-fraction", type=_floats, default=[0.3, 0.5],
                   help="cache fractions to run at; comma-separated")
    b.add_argument("--repeat", type=int, default=3, help="runs per point (median reported)")
    b.add_argument("--workload", choices=("cc", "pagerank"), default="cc",
                   help="bench trace: cc (real misses at 0.3/0.5) or the old pagerank (none)")
    v = sub.add_parser("whatif-speed", help="time the what-if path on a synthetic event log")
    v.add_argument("--tasks", type=_positive, default=100_000)
    v.add_argument("--workload", choices=("cc", "pagerank", "svdpp", "ml"), default="cc")
    v.add_argument("--no-profile", action="store_true", help="time without cProfile")
    v.add_argument("--out", type=Path, help="write speed.md into this dir")
    v.add_argument("--jobs", type=_positive, default=None,
                   help="processes for the replays (default: one per core; with the profile: 1)")
    g = sub.add_parser("gpu-study", help="GPU stages on CPU + GPU executors: GPU-stage misses, "
                                         "idle time, remote reads, placement (simulator)")
    g.add_argument("--out", type=Path, default=Path("results/gpu"),
                   help="write report.md, results.json, gpu.png here")
    g.add_argument("--cache-fraction", type=_floats, default=[0.2, 0.3, 0.4, 0.5, 0.7, 1.0])
    g.add_argument("--executors", type=_positive, default=4)
    g.add_argument("--gpu-executors", type=_positive, default=2,
                   help="how many of the executors (the last ones) have GPUs")
    g.add_argument("--refs", choices=REFS, default="profile")
    g.add_argument("--seed", type=int, default=0)
    return ap


def run_gpu_study(args, argv: list[str]) -> int:
    from lrc.gpu_study import run_study, write_report

    if args.gpu_executors >= args.executors:
        raise ValueError("--gpu-executors must leave at least one CPU executor")
    rows = run_study(args.cache_fraction, args.executors, args.gpu_executors, refs=args.refs,
                     seed=args.seed)
    cmd = "python -m lrc " + " ".join(shlex.quote(a) for a in argv)
    path = write_report(rows, args.out, cmd, args.executors, args.gpu_executors, args.refs, 100e6)
    print(f"report: {path}")
    return 0


def run_whatif_speed(args, argv: list[str]) -> int:
    from lrc.whatif_speed import measure, report

    text = report(measure(args.tasks, args.workload, profile=not args.no_profile,
                          jobs=args.jobs),
                  "python -m lrc " + " ".join(shlex.quote(a) for a in argv))
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "speed.md").write_text(text + "\n")
    return 0


def run_simulate(args) -> list[dict]:
    if args.trace:
        traces = [load_trace(args.trace)]
        traces[0].name = traces[0].name or args.trace.stem
    else:
        names = list(WORKLOADS) if args.workload == "all" else [args.workload]
        traces = [make(n, seed=args.seed) for n in names]
    rows = []
    for tr in traces:
        ct = CompiledTrace(tr)
        for f in args.cache_fraction:
            bound = hit_bound(ct, f, args.executors).hit_ratio  # no policy can beat it
            for p in args.policies:
                admit = admits(p, args.admit)
                row = simulate(ct, p, f, executors=args.executors, cores=args.cores,
                               refs=args.refs, peer_mode=args.peer_mode,
                               storage_fraction=args.storage_fraction,
                               unroll_threshold=args.unroll_threshold,
                               admit=admit,
                               task_order=order_for(p, args.task_order)).to_dict()
                row["bound_hit_ratio"] = bound
                if admit:
                    row["admit"] = True
                rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parser().parse_args(argv)
    try:
        if args.cmd == "bench-speed":
            from lrc.bench import bench_speed

            bench_speed(args.accesses, args.policies, args.out, args.profile,
                        tuple(args.cache_fraction), args.repeat, args.workload)
            return 0
        if args.cmd == "whatif":
            return run_whatif_cmd(args, argv)
        if args.cmd == "gpu-study":
            return run_gpu_study(args, argv)
        if args.cmd == "whatif-speed":
            return run_whatif_speed(args, argv)
        rows = run_simulate(args)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from lrc.report import table, write_report

    print(table(rows), end="")
    if args.json:
        args.json.write_text(json.dumps({"results": rows}, indent=1))
    if args.report:
        cmd = "python -m lrc " + " ".join(shlex.quote(a) for a in argv)
        print(f"report: {write_report(rows, args.report, cmd)}")
    return 0


def run_whatif_cmd(args, argv: list[str]) -> int:
    import logging

    from lrc.whatif import fmt_bytes, run_whatif
    from lrc.whatif_report import write_report

    if not logging.getLogger().handlers:  # parser warnings to stderr, never stdout
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s",
                            stream=sys.stderr)
    res = run_whatif(args.eventlog, args.cache_sizes, args.policies, args.executors, args.cores,
                     args.refs, progress=None, jobs=args.jobs, admit=args.admit,
                     task_order=args.task_order)
    cmd = "python -m lrc " + " ".join(shlex.quote(a) for a in argv)
    report = write_report(res, args.out, cmd)
    print(res.log.summary())
    for name, r in (("best policy", res.recommendation["best"]), ("LRU", res.recommendation["lru"])):
        if r is None:
            print(f"{name}: no size tried gets within 5% of unlimited memory")
        else:
            print(f"{name} ({r['policy']}): {fmt_bytes(r['per_executor_bytes'])} per executor "
                  f"(fraction {r['cache_fraction']:.2f}) is within 5% of unlimited memory")
    print(f"report: {report}")
    return 0
