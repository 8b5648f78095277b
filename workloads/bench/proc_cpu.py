"""CPU seconds each process of a run used, read from /proc: where a plugin's cost goes.

On a machine whose cores the executors keep busy, any CPU the plugin adds - the brain's Python
thread, the driver JVM's listener and py4j work, the executors' per-task reports, garbage
collection, JIT compilation - is time taken from the tasks. Spark's task metrics count only task
threads; these are the processes' whole user + system time, children included (a process's
reaped children are in its cutime/cstime, the live ones are counted on their own):
- `python_s`: the driver's Python process (the application's driver code, py4j's client side
  and an in-process brain, whose own thread time is `stats.brain_cpu_s`);
- `driver_jvm_s` with its descendants (a sidecar brain), `driver_gc_s` and `driver_jit_s`
  (the driver JVM's collectors and JIT compiler, from its management beans);
- `executors_s`: every executor JVM of the application with its descendants (PySpark's daemon
  and Python workers).
Linux only (None elsewhere); never raises."""
from __future__ import annotations

import os
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds of the process and its reaped children)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = raw[raw.rindex(")") + 2:].split()  # after "pid (comm) ": state, ppid, ...
    utime, stime, cutime, cstime = (int(x) for x in rest[11:15])
    return int(rest[1]), (utime + stime + cutime + cstime) / _TICK


def _processes() -> dict[int, tuple[int, float]]:
    out = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and (s := _stat(int(d.name))) is not None:
            out[int(d.name)] = s
    return out


def _tree_cpu(roots: list[int], procs: dict[int, tuple[int, float]], exclude=()) -> float:
    """CPU seconds of ``roots`` and their live descendants, minus the ``exclude`` subtrees."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    total, todo, seen = 0.0, list(roots), set()
    while todo:
        pid = todo.pop()
        if pid in seen or pid not in procs or pid in exclude:
            continue
        seen.add(pid)
        total += procs[pid][1]
        todo.extend(children.get(pid, ()))
    return total


def executor_pids(app_id: str) -> list[int]:
    """The application's executor JVMs on this machine (their command line names the app)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes()
        except OSError:
            continue
        if b"CoarseGrainedExecutorBackend" in cmd and app_id.encode() in cmd:
            out.append(int(d.name))
    return out


def process_cpu(sc) -> dict | None:
    """CPU seconds per process of this application so far (module docstring)."""
    if not Path("/proc/self/stat").exists():
        return None
    try:
        jvm = sc._jvm
        driver = int(jvm.java.lang.ProcessHandle.current().pid())
        mf = jvm.java.lang.management.ManagementFactory
        gc = sum(max(0, int(b.getCollectionTime())) for b in mf.getGarbageCollectorMXBeans())
        jit = int(mf.getCompilationMXBean().getTotalCompilationTime())
        execs = executor_pids(sc.applicationId)
        procs = _processes()
        me = procs.get(os.getpid())
        return {"python_s": me[1] if me else None,
                # (in local-cluster mode the executors are the driver JVM's children)
                "driver_jvm_s": _tree_cpu([driver], procs, set(execs)),
                "driver_gc_s": gc / 1000, "driver_jit_s": jit / 1000,
                "executors_s": _tree_cpu(execs, procs), "executor_jvms": len(execs)}
    except Exception:  # diagnostics only
        return None
