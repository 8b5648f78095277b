"""Speed of the what-if path on a large event log: `python -m lrc whatif-speed --tasks 100000`.

The log is a synthetic application (``lrc.synth``) written in Spark's event-log format
(``lrc.eventlog_write``), sized to the number of tasks asked for; the measurement is the whole
``lrc.whatif.run_whatif`` path - parse, compile, replay of 5 policies at 5 cache sizes, the
bound - with the time of each phase, tasks and log lines per second, and where the time goes
(cProfile, by own time). CPU time of this process is the primary figure: the machine is shared.
"""
from __future__ import annotations

import cProfile
import io
import os
import pstats
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


def measure(tasks: int, workload: str = "cc", profile: bool = True) -> dict:
    trace = synthetic_trace(tasks, workload)
    with tempfile.TemporaryDirectory() as tmp:
        log = write_eventlog(trace, Path(tmp) / "app.log")
        nbytes = log.stat().st_size
        prof = cProfile.Profile() if profile else None
        cpu, wall = time.process_time(), time.perf_counter()
        if prof:
            prof.enable()
        res = run_whatif(log, [CacheSize(fraction=f) for f in SIZES], list(DEFAULT_POLICIES),
                         progress=False)
        if prof:
            prof.disable()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    top = ""
    if prof:
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(15)
        top = buf.getvalue()
    lines = res.log.lines
    return {"workload": workload, "tasks": res.log.tasks, "lines": lines, "log_bytes": nbytes,
            "runs": len(res.rows), "cpu_s": cpu, "wall_s": wall, "timings": res.timings,
            "tasks_per_s": res.log.tasks / cpu, "lines_per_s_parse": lines / res.timings["parse_s"],
            "load": os.getloadavg(), "profile": top, "profiled": profile}


def report(m: dict, command: str) -> str:
    t = m["timings"]
    rows = [("parse (read + JSON + DAG + derive reads)", t["parse_s"]),
            ("compile (block ids, flat arrays)", t["compile_s"]),
            (f"replay ({m['runs']} runs: {len(DEFAULT_POLICIES)} policies x {len(SIZES)} sizes, "
             "+1 unlimited)", t["replay_s"]), ("bound (per size)", t["bound_s"])]
    out = [f"# What-if speed: {m['tasks']:,} tasks", "",
           f"Command: `{command}`", "",
           f"Log: synthetic `{m['workload']}` written as a Spark event log "
           f"(`lrc.eventlog_write`): {m['lines']:,} lines, {m['log_bytes'] / 1e6:.1f} MB, "
           f"with block updates. Load average during the run: "
           + " / ".join(f"{x:.1f}" for x in m["load"]) + " (2 cores, shared)."
           + (" Timed under cProfile (about 1.5-2x slower than without)." if m["profiled"]
              else ""), "",
           "| phase | wall s | share |", "|---|---|---|"]
    for name, s in rows:
        out.append(f"| {name} | {s:.1f} | {s / t['total_s']:.0%} |")
    out += [f"| **total** | **{t['total_s']:.1f}** | |", "",
            f"CPU time {m['cpu_s']:.1f} s; {m['tasks_per_s']:,.0f} tasks per CPU second for the "
            f"whole path; parsing {m['lines_per_s_parse']:,.0f} lines/s.", ""]
    if m["profile"]:
        out += ["Where the time goes (cProfile, own time, top 15):", "", "```",
                m["profile"].strip(), "```", ""]
    return "\n".join(out)
