"""Concurrency (issue 14): reference counts stay right while Spark runs many things at once.

On separate executor JVMs under the FAIR scheduler, with speculation on, jobs are submitted at
once from threads: two jobs sharing one shuffle-map stage, a task that fails on its first attempt
(`TaskContext.attemptNumber()`) and is retried, a broadcast-heavy job, two cached RDDs over the
same data read together, one RDD cached, unpersisted and cached again (same id), a job cancelled
mid-stage (`setJobGroup` + `cancelJobGroup` once one of its tasks finished) and an RDD unpersisted
while a job reads it. Every job returns what plain Python computes.

After every event the brain applies, a tap in the brain's event handling (under the brain's
lock) keeps a snapshot of its reference state together with ``n``, the number of events the live
recorder held then (the recorder's events are what spark.lrc.tracePath saves), so every state the
brain passes through is checked, whatever the timing. After the application stopped, each
snapshot is compared with a **brute-force recount from the saved
trace** (DAG + its first ``n`` events), which shares no code with `lrc.refcount.RefState`:

- a task ``(stage, partition)`` must hold references iff some job whose stages (in the trace's
  DAG) include the stage has a job_start and no job_end among the ``n`` events, the stage has
  no stage_completed (successful or failed: the brain drops a stage's references at either;
  a rerun attempt plans the stage again, test_faults.py, but no stage fails here other than by
  cancellation, and no stage reruns), the stage does not write a shuffle that a
  completed stage wrote before its job started (Spark lists such a map stage again under a new
  id and skips it), the partition is one the stage runs, and no successful task end (a ``task`` event, any attempt)
  of that partition was recorded. Failed attempts, killed attempts and a speculative copy that
  lost are no task event in the trace: they leave the task holding references;
- the registered tasks of real stages (RefState.pending, stage ids >= 0) must be exactly that
  set: a task dropped early (a failed attempt, another job's end) or never dropped (a
  cancelled job) is a difference;
- each block's count must equal the number of those tasks whose registered reads include it,
  plus the predicted pseudo-stages' (negative ids) when spark.lrc.predict is on. A task's reads
  are the input of the counting, not its result: the DAG walk fixed them at registration and
  RefState.pending keeps them unchanged until they drop;
- no count is below zero and RefState counted no decrement below zero (brain.stats()).

The run uses spark.lrc.predict=false (only real stages; at the end every count is 0). Its trace
is then fed again, event by event, to a Planner with predictions on (predicted references on
top, held by pseudo-stages): the same checks hold after each event. (The live run with
spark.lrc.predict=true passed the same checks too; one session keeps the module's time down.)
Interleavings vary from run to run; every check is exact whichever happens. Whether speculation
launched a copy is timing and is not asserted; the failed first attempt is certain and is.
"""
from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import feed_planner
from lrc.planner import Planner
from lrc.trace import load_trace
from spark_plugin.doctor import start_session
from spark_plugin.session import active_brain

pytestmark = [pytest.mark.spark, pytest.mark.cluster]
N, P = 4000, 4
DATA = [x * 7 % 1009 for x in range(N)]
BROADCASTS = 4
BC_SIZE = 50_000


def live_tasks(dag, events) -> set[tuple[int, int]]:
    """The tasks that must hold references after ``events`` (see the module docstring)."""
    started, ended, completed, done, skipped, written = set(), set(), set(), set(), set(), set()
    for e in events:
        if e.kind == "job_start":
            started.add(e.job_id)
            # a map stage listed under a new id for a shuffle already written: Spark skips it
            skipped.update(s for s in dag.jobs[e.job_id].stage_ids
                           if dag.stages[s].shuffle in written)
        elif e.kind == "job_end":
            ended.add(e.job_id)
        elif e.kind == "stage_completed":
            completed.add(e.stage_id)
            if dag.stages[e.stage_id].shuffle >= 0:  # (no map stage fails here)
                written.add(dag.stages[e.stage_id].shuffle)
        elif e.kind == "task":
            done.add((e.stage_id, e.partition))
    return {(s, p) for j in started - ended for s in dag.jobs[j].stage_ids
            if s not in completed and s not in skipped
            for p in dag.stages[s].task_partitions() if (s, p) not in done}


def recount(pending: dict[int, dict[int, tuple]], live: set) -> Counter:
    """References per block: the registered reads of every task that must hold references, and
    of every predicted pseudo-stage's task."""
    out: Counter = Counter()
    for s, parts in pending.items():
        for p, reads in parts.items():
            if s < 0 or (s, p) in live:
                out.update(reads)
    return out


def check(snapshot, trace) -> list[str]:
    """What differs between one snapshot of RefState and the recount from the trace."""
    n, counts, pending = snapshot
    live = live_tasks(trace.dag, trace.events[:n])
    registered = {(s, p) for s, parts in pending.items() if s >= 0 for p in parts}
    problems = []
    if registered != live:
        problems.append(f"after {n} events: registered but done {sorted(registered - live)[:8]}, "
                        f"live but not registered {sorted(live - registered)[:8]}")
    want = {b: c for b, c in recount(pending, live).items() if c}
    if counts != want:
        diff = {b: (counts.get(b, 0), want.get(b, 0)) for b in set(counts) | set(want)
                if counts.get(b, 0) != want.get(b, 0)}
        problems.append(f"after {n} events: counts (RefState, recount) differ: "
                        f"{dict(sorted(diff.items())[:8])}")
    if any(c < 0 for c in counts.values()):
        problems.append(f"after {n} events: negative counts {[b for b, c in counts.items() if c < 0]}")
    return problems


def record_every_state(brain) -> tuple[list, Counter]:
    """After each event the brain applies (under its lock): (events recorded so far, nonzero
    counts, registered reads); and the task ends reported failed or killed."""
    snapshots, unsuccessful = [], Counter()
    handle = brain._handle

    def tapped(line: str) -> None:
        handle(line)
        refs = brain.planner.refs
        snapshots.append((len(brain.recorder.events), {k: c for k, c in refs.count.items() if c},
                          {s: dict(parts) for s, parts in refs.pending.items()}))
        if '"e":"task_end"' in line and '"success":false' in line:
            unsuccessful["task ends not successful"] += 1

    brain._handle = tapped
    return snapshots, unsuccessful


def wait_for(pred, what: str, timeout: float = 90.0):
    deadline = time.time() + timeout
    while not (v := pred()):
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return v


def group_stage(sc, group: str, enough) -> bool:
    """Whether a stage of the job group's running job satisfies ``enough(stage_info)``."""
    st = sc.statusTracker()
    for j in st.getJobIdsForGroup(group):
        info = st.getJobInfo(j)
        for sid in (info.stageIds if info else ()):
            si = st.getStageInfo(sid)
            if si is not None and enough(si):
                return True
    return False


def run_workload(sc, release) -> dict[str, tuple]:
    """Submit the scenarios at once from threads; returns {name: (got, want)}. Tasks that must
    still be running when the driver acts wait for the file ``release`` (or 150 s)."""
    release = str(release)

    # defined here, not at module level: cloudpickle then ships them by value to executors
    def fail_first_attempt(idx, it):
        from pyspark import TaskContext

        if idx == 1 and TaskContext.get().attemptNumber() == 0:
            raise RuntimeError("injected: the first attempt of partition 1 fails")
        return [sum(it)]

    def held(idx, it):
        """Partition 0 passes at once; the others wait for the release file."""
        import os

        deadline = time.time() + 150
        while idx and not os.path.exists(release) and time.time() < deadline:
            time.sleep(0.05)
        return it

    def stall(idx, it):
        """Partition 0 ends at once; the others wait until killed (or 150 s)."""
        deadline = time.time() + 150
        while idx and time.time() < deadline:
            time.sleep(0.05)
        return [sum(it)]

    base = sc.parallelize(range(N), P).map(lambda x: x * 7 % 1009).cache()
    twin = sc.parallelize(range(N), P).map(lambda x: x * 7 % 1009).cache()  # same data again
    victim = sc.parallelize(range(N), P).map(lambda x: x + 1).cache()
    assert base.count() == N and twin.count() == N and victim.count() == N
    # one shuffle-map stage for two jobs: the first is cancelled while the stage runs
    shuffled = (base.mapPartitionsWithIndex(held).map(lambda x: (x % 10, x))
                .reduceByKey(lambda a, b: a + b, 2))
    tables = [sc.broadcast(list(range(i, i + BC_SIZE))) for i in range(BROADCASTS)]
    by_key = Counter()
    for x in DATA:
        by_key[x % 10] += x
    start = threading.Barrier(5)  # the jobs of `work` below

    def job(pool: str, fn, group: str | None = None, barrier: bool = True):
        def run():
            sc.setLocalProperty("spark.scheduler.pool", pool)
            if group:
                sc.setJobGroup(group, group, interruptOnCancel=True)
            if barrier:
                start.wait()
            return fn()
        return run

    def cancelled(fn):
        def run():
            try:
                fn()
            except Exception as e:
                return "cancelled" if "cancel" in str(e).lower() else repr(e)[:300]
            return "finished"
        return run

    def broadcast_heavy():
        return base.map(lambda x: x + sum(t.value[x % BC_SIZE] for t in tables)).sum()

    def cached_twice():  # the same RDD id cached, unpersisted and cached again
        again = sc.parallelize(range(N), P).map(lambda x: 2 * x).cache()
        first = again.sum()
        again.unpersist()
        again.cache()
        return first, again.count(), again.sum()

    evens = sum(2 * x for x in range(N))
    want = {
        "retried": sum(DATA),
        "broadcast": sum(x + BROADCASTS * (x % BC_SIZE) + sum(range(BROADCASTS)) for x in DATA),
        "twins": 0,
        "cached_twice": (evens, N, evens),
        "victim": sum(x + 1 for x in range(N)),
        "shared_cancelled": "cancelled",
        "shared_kept": sum(DATA),
        "cancelled": "cancelled",
    }
    work = {
        "retried": job("a", lambda: base.mapPartitionsWithIndex(fail_first_attempt).sum()),
        "broadcast": job("b", broadcast_heavy),
        "twins": job("c", lambda: base.zip(twin).map(lambda ab: ab[0] - ab[1]).sum()),
        "cached_twice": job("d", cached_twice),
        "shared_cancelled": job("f", cancelled(lambda: sorted(shuffled.collect())),
                                group="shared_cancelled"),
    }
    later = {
        "victim": job("e", lambda: victim.mapPartitionsWithIndex(held).sum(), group="victim",
                      barrier=False),
        "shared_kept": job("g", lambda: shuffled.values().sum(), group="shared_kept",
                           barrier=False),
        "cancelled": job("h", cancelled(lambda: base.mapPartitionsWithIndex(stall).sum()),
                         group="cancelled", barrier=False),
    }
    with ThreadPoolExecutor(len(work) + len(later)) as pool:
        futures = {name: pool.submit(fn) for name, fn in work.items()}
        # the map stage of the first job has a finished task: a second job joins the stage,
        # then the first is cancelled (the stage goes on for the second)
        wait_for(lambda: group_stage(sc, "shared_cancelled", lambda si: si.numCompletedTasks >= 1),
                 "a finished map task of the job to cancel")
        futures["shared_kept"] = pool.submit(later["shared_kept"])
        wait_for(lambda: sc.statusTracker().getJobIdsForGroup("shared_kept"), "the second job")
        sc.cancelJobGroup("shared_cancelled")
        # an RDD unpersisted while a job reads it: the job's tasks past the first wait for the
        # release, so it surely runs while the RDD goes
        futures["victim"] = pool.submit(later["victim"])
        wait_for(lambda: sc.statusTracker().getJobIdsForGroup("victim"), "the job reading victim")
        victim.unpersist()
        open(release, "w").close()
        # a job cancelled mid-stage whose running tasks are killed
        futures["cancelled"] = pool.submit(later["cancelled"])
        wait_for(lambda: group_stage(sc, "cancelled", lambda si: si.numCompletedTasks >= 1
                                     and si.numActiveTasks >= 1),
                 "a finished and a running task of the job to cancel")
        sc.cancelJobGroup("cancelled")
        got = {name: f.result(timeout=300) for name, f in futures.items()}
    return {name: (got[name], want[name]) for name in want}


def replay_predicting(trace) -> tuple[list, int]:
    """The recorded run fed again, event by event, to a Planner that predicts references
    (what spark.lrc.predict=true does live): a snapshot after each event (as the tap takes them),
    and the planner's decrements below zero."""
    p, dag, snapshots = Planner("lrc", predict=True), trace.dag, []
    for e in trace.events:
        feed_planner(p, dag, e)
        snapshots.append((len(snapshots) + 1, {k: c for k, c in p.refs.count.items() if c},
                          {s: dict(parts) for s, parts in p.refs.pending.items()}))
    return snapshots, p.refs.negative_decrements


def test_reference_counts_match_a_recount_from_the_trace_under_concurrent_jobs(tmp_path):
    trace_path = tmp_path / "trace.parquet"
    spark = start_session("local-cluster[2,1,1024]", "lrc", {
        "spark.scheduler.mode": "FAIR",
        "spark.speculation": "true",
        "spark.speculation.interval": "100ms",
        "spark.speculation.multiplier": "1.5",
        "spark.speculation.quantile": "0.25",
        "spark.task.maxFailures": "4",
        "spark.locality.wait": "0s",  # a task set's tasks start in partition order
        "spark.testing.memory": str(64 << 20),
        "spark.lrc.predict": "false",
        "spark.lrc.tracePath": str(trace_path),
    })
    try:
        sc = spark.sparkContext
        brain = active_brain()
        snapshots, unsuccessful = record_every_state(brain)
        t0 = time.time()
        results = run_workload(sc, tmp_path / "release")
        took = time.time() - t0
        # the first attempt that failed, and a task of the cancelled job killed: Spark reports
        # the kill once the executor confirms it (after the job's end)
        wait_for(lambda: brain.sync() or unsuccessful["task ends not successful"] >= 2,
                 "the failed and the killed task ends")
        stats = brain.stats()
    finally:
        spark.stop()
    wrong = {k: v for k, v in results.items() if v[0] != v[1]}
    assert not wrong, f"results differ from plain Python (got, want): {wrong}"
    assert stats["degraded"] is None and not stats["dropped_events"], stats
    assert stats["negative_decrements"] == 0
    trace = load_trace(trace_path)
    assert len(trace.events) == len(brain.recorder.events)
    problems = [p for s in snapshots for p in check(s, trace)]
    distinct = sorted({p.split(": ", 1)[1] for p in problems})
    assert not problems, f"{len(problems)} mismatches: {distinct[:10]}"
    n, counts, pending = snapshots[-1]  # every job ended: nothing may hold references
    assert n == len(trace.events) and not live_tasks(trace.dag, trace.events)
    assert counts == {} and not any(pending.values())

    # the same run with predicted references on top (pseudo-stages): the same checks hold
    predicted, negative = replay_predicting(trace)
    problems = [p for s in predicted for p in check(s, trace)]
    assert not problems and negative == 0, f"{len(problems)} mismatches: {problems[:5]}"
    with_predictions = sum(any(s < 0 and parts for s, parts in snap[2].items())
                           for snap in predicted)
    assert with_predictions, "the replay predicted references"
    print(f"{len(snapshots)} live states and {len(predicted)} predicting replay states checked "
          f"({with_predictions} with predicted references), "
          f"{n} trace events, {sum(e.kind == 'task' for e in trace.events)} task ends, "
          f"{unsuccessful['task ends not successful']} failed or killed, workload {took:.1f} s")
