"""Speed of the what-if path on a large event log: `python -m lrc whatif-speed --tasks 100000`.

The log is a synthetic application (``lrc.synth``) written in Spark's event-log format
(``lrc.eventlog_write``), sized to the number of tasks asked for; the measurement is the whole
``lrc.whatif.run_whatif`` path - parse, compile, replay of 5 policies at 5 cache sizes, the
bound - with the time of each phase, tasks and log lines per second, and where the time goes
(cProfile, by own time). The replays and bounds run in worker processes (``jobs``, default one
per core): wall time is the goal's figure, CPU time (this process and its workers) says what
the machine spent, which a shared machine's load does not change much. cProfile sees only this
process, so a profiled run replays in it (``jobs=1``).
"""
from __future__ import annotations

import cProfile
import io
import os
import pstats
import resource
import tempfile
import time
from pathlib import Path

from lrc.eventlog_write import write_eventlog
from lrc.synth import make
from lrc.whatif import DEFAULT_POLICIES, CacheSize, run_whatif

SIZES = (0.1, 0.3, 0.5, 0.7, 1.0)


def synthetic_trace(tasks: int, workload: str = "cc"):
    """``workload`` scaled by its partition count to about ``tasks`` tasks (at least)."""
    probe = make(workload, seed=1, parts=8)
    per_part = sum(1 for e in probe.events if e.kind == "task") / 8
    return make(workload, seed=1, parts=max(1, -(-tasks // int(per_part))))


# the measurement before the replays ran in parallel (commit a2ef9be, results/whatif/speed.md
# then): same command, one process, the bound at 300 subgradient steps after 1,276 evaluations
BEFORE = {"commit": "a2ef9be", "tasks": 100_022, "parse_s": 5.4, "compile_s": 1.9,
          "replay_s": 91.2, "bound_s": 56.9, "total_s": 155.4, "cpu_s": 155.2,
          "load": (1.1, 1.6, 2.6)}


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def measure(tasks: int, workload: str = "cc", profile: bool = True,
            jobs: int | None = None) -> dict:
    trace = synthetic_trace(tasks, workload)
    if profile:
        jobs = 1
    with tempfile.TemporaryDirectory() as tmp:
        log = write_eventlog(trace, Path(tmp) / "app.log")
        nbytes = log.stat().st_size
        prof = cProfile.Profile() if profile else None
        load0 = os.getloadavg()
        kids, cpu, wall = _children_cpu(), time.process_time(), time.perf_counter()
        if prof:
            prof.enable()
        res = run_whatif(log, [CacheSize(fraction=f) for f in SIZES], list(DEFAULT_POLICIES),
                         progress=False, jobs=jobs)
        if prof:
            prof.disable()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        kids = _children_cpu() - kids
    top = ""
    if prof:
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(15)
        top = buf.getvalue()
    lines = res.log.lines
    return {"workload": workload, "tasks": res.log.tasks, "lines": lines, "log_bytes": nbytes,
            "runs": len(res.rows), "cpu_s": cpu + kids, "cpu_main_s": cpu, "cpu_workers_s": kids,
            "wall_s": wall, "timings": res.timings, "tasks_per_s": res.log.tasks / wall,
            "lines_per_s_parse": lines / res.timings["parse_s"], "load_before": load0,
            "load": os.getloadavg(), "profile": top, "profiled": profile}


def report(m: dict, command: str) -> str:
    t = m["timings"]
    w, same = t["workers"], t.get("runs_same_as_unlimited", 0)
    rows = [("parse (read + JSON + DAG + derive reads)", t["parse_s"], ""),
            ("compile (block ids, flat arrays)", t["compile_s"], ""),
            (f"replay ({m['runs'] + 1} results: {len(DEFAULT_POLICIES)} policies x {len(SIZES)} "
             f"sizes + unlimited memory, {same} of them the unlimited run's: a cache it never "
             f"filled) and bound (per size), in {w} process{'es' if w > 1 else ''}",
             t["replay_s"], f"replays {t['replay_cpu_s']:.1f}, bounds {t['bound_cpu_s']:.1f}")]
    load = lambda xs: " / ".join(f"{x:.1f}" for x in xs)  # noqa: E731
    out = [f"# What-if speed: {m['tasks']:,} tasks", "",
           f"Command: `{command}`", "",
           f"Log: synthetic `{m['workload']}` written as a Spark event log "
           f"(`lrc.eventlog_write`): {m['lines']:,} lines, {m['log_bytes'] / 1e6:.1f} MB, "
           f"with block updates. Load average (1 / 5 / 15 min) before the run: "
           f"{load(m['load_before'])}, after: {load(m['load'])} ({os.cpu_count()} cores)."
           + (" Timed under cProfile (about 1.5-2x slower than without), in one process."
              if m["profiled"] else ""), "",
           "| phase | wall s | share | CPU s |", "|---|---|---|---|"]
    for name, sec, cpu in rows:
        out.append(f"| {name} | {sec:.1f} | {sec / t['total_s']:.0%} | {cpu} |")
    out += [f"| **total** | **{t['total_s']:.1f}** | | {m['cpu_s']:.1f} |", "",
            f"CPU time {m['cpu_s']:.1f} s ({m['cpu_main_s']:.1f} s in this process, "
            f"{m['cpu_workers_s']:.1f} s in its workers); {m['tasks_per_s']:,.0f} tasks per "
            f"second (wall) for the whole path; parsing {m['lines_per_s_parse']:,.0f} lines/s.",
            ""]
    b = BEFORE
    if m["tasks"] == b["tasks"] and m["workload"] == "cc" and not m["profiled"]:
        out += [f"Before (commit {b['commit']}, the same command: replays and bounds one after "
                f"the other in one process, load {load(b['load'])}) and after:", "",
                "| phase | before: wall s | after: wall s |", "|---|---|---|",
                f"| parse | {b['parse_s']:.1f} | {t['parse_s']:.1f} |",
                f"| compile | {b['compile_s']:.1f} | {t['compile_s']:.1f} |",
                f"| replay + bound | {b['replay_s']:.1f} + {b['bound_s']:.1f} | "
                f"{t['replay_s']:.1f} (in {w} processes) |",
                f"| **total** | **{b['total_s']:.1f}** | **{t['total_s']:.1f}** "
                f"({b['total_s'] / t['total_s']:.1f}x faster) |",
                f"| CPU | {b['cpu_s']:.1f} | {m['cpu_s']:.1f} |", ""]
    if m["profile"]:
        out += ["Where the time goes (cProfile, own time, top 15):", "", "```",
                m["profile"].strip(), "```", ""]
    return "\n".join(out)
