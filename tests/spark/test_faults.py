"""Faults of the brain on real Spark (issue 14): a brain whose thread dies without a word, and
one whose event handling raises. Either way executors go back to Spark's LRU order (the table
is cleared, executors are told no plans will come and receive the cleared version), once, with a
warning that says why, and every job returns what plain Spark returns.

The silent death is caught by the driver's watchdog (spark.lrc.brainTimeoutMs without a drain
while events wait); the raising brain falls back itself, at once."""
from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from conftest import feed_planner, spark_block_holders
from lrc.eventlog import read_eventlog
from lrc.planner import Planner
from spark_plugin.bridge import drain_lines
from spark_plugin.doctor import start_session
from spark_plugin.session import active_brain

pytestmark = pytest.mark.spark
N, PARTS = 8000, 8


def wait_until(pred, what: str, timeout: float = 30.0):
    deadline = time.time() + timeout
    while not (value := pred()):
        if time.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)
    return value


def applied_versions(bridge) -> dict[str, int]:
    """Highest table version each executor reported applied, from the (brainless) event buffer."""
    out: dict[str, int] = {}
    for line in drain_lines(lambda n, _w: bridge.drain(n), 100000):
        e = json.loads(line)
        if e["e"] == "table_applied":
            out[e["executor"]] = max(out.get(e["executor"], 0), e["version"])
    return out


def stop_silently(brain) -> None:
    """The brain's thread ends without detaching or clearing anything: a killed brain."""
    brain._stop.set()
    brain._thread.join(10)
    assert not brain._thread.is_alive()


def raise_on_next_event(brain) -> None:
    def boom(line: str) -> None:
        raise RuntimeError("injected fault in the brain")

    brain._handle = boom


@pytest.mark.parametrize("master, fault", [
    pytest.param("local-cluster[2,1,1024]", stop_silently, marks=pytest.mark.cluster, id="silent"),
    pytest.param("local[2]", raise_on_next_event, id="raising"),
])
def test_a_brain_that_fails_is_replaced_by_spark_lru_and_results_do_not_change(master, fault):
    spark = start_session(master, "lrc", {"spark.lrc.brainTimeoutMs": "1500"})
    try:
        sc = spark.sparkContext
        bridge = sc._jvm.org.sparklrc.LrcBridge
        a = sc.parallelize(range(N), PARTS).map(lambda x: (x % 7, x)).cache()
        b = a.mapValues(lambda x: 2 * x).cache()
        assert b.count() == N
        assert b.values().sum() == 2 * sum(range(N))  # a job that reads b: b gets priorities
        brain = active_brain()
        brain.sync()
        wait_until(lambda: str(b.id()) in bridge.tableRdds().split(","), "b's priorities in the table")
        before = bridge.tableVersion()
        assert bridge.brainAttached()

        fault(brain)
        # jobs go on, their events wait for a brain that no longer takes them
        assert a.values().sum() == sum(range(N))
        wait_until(lambda: not bridge.brainAttached(), "the fallback to LRU")
        assert bridge.tableRdds() == "", "every priority cleared: Spark's LRU order"
        cleared = bridge.tableVersion()
        assert cleared > before
        # both executors (one in local mode) got the cleared version
        executors = 2 if master.startswith("local-cluster") else 1
        seen: dict[str, int] = {}
        def all_applied():
            for ex, v in applied_versions(bridge).items():
                seen[ex] = max(seen.get(ex, 0), v)
            return len([v for v in seen.values() if v >= cleared]) >= executors
        b.values().sum()  # a task asks for the table if no push reached it yet
        wait_until(all_applied, f"executors applying table version {cleared}: {seen}")

        # the same answers as plain Spark, also after the fallback
        assert b.values().sum() == 2 * sum(range(N))
        assert sorted(b.reduceByKey(lambda x, y: x + y).collect()) == sorted(
            (k, 2 * sum(x for x in range(N) if x % 7 == k)) for k in range(7))
        if fault is stop_silently:  # the driver's watchdog said why, once
            said = [w for w in str(bridge.warnings()).splitlines() if "has taken no events" in w]
            assert len(said) == 1, bridge.warnings()
        else:  # the brain fell back itself, saying why
            assert "injected fault" in brain.stats()["degraded"]
    finally:
        spark.stop()


def test_a_full_event_buffer_falls_back_to_lru_then_resynchronises_from_spark():
    """The brain is held while a 200-task job runs (its consumer lock), so the JVM's buffer of
    200 events overflows. Counts would be wrong: the brain clears the table and detaches, saying
    how many events it lost and what to raise. Once no job runs it cuts the stream (the buffer is
    emptied; every later event belongs to a later job), takes Spark's cached blocks from the
    BlockManagerMaster and attaches again: the next job's plan is whole again - each of its
    reads of the cached RDD is planned and hit - and results stay right throughout."""
    spark = start_session("local[2]", "lrc", {"spark.lrc.bufferSize": "200"})
    try:
        sc = spark.sparkContext
        bridge = sc._jvm.org.sparklrc.LrcBridge
        a = sc.parallelize(range(N), PARTS).cache()
        assert a.count() == N
        brain = active_brain()
        with brain._consume:  # the brain cannot drain while the job's events arrive
            assert sc.parallelize(range(N), 200).map(lambda x: x + 1).sum() == sum(range(1, N + 1))
            wait_until(lambda: bridge.dropped() > 0, "the buffer to overflow")
        wait_until(lambda: brain.stats()["resyncs"] == 1, "the resynchronisation")
        stats = brain.stats()
        said = stats["last_fallback"]
        assert "events were dropped" in said and "spark.lrc.bufferSize" in said, said
        assert stats["degraded"] is None and bridge.brainAttached()
        assert bridge.tableRdds() == "", "no plan survives the lost events"
        # the rebuilt view of the cache is Spark's
        held = brain_locations(brain, a.id(), PARTS)
        assert held == spark_locations(sc, a.id(), PARTS) and all(held.values()), held

        before = brain.stats()
        assert a.map(lambda x: 2 * x).sum() == 2 * sum(range(N))
        def reported():
            brain.sync()
            return brain.stats()["tasks"] - before["tasks"] >= PARTS
        wait_until(reported, "the executors' reports on the job after the cut")
        after = brain.stats()
        assert after["hits"] - before["hits"] == PARTS, (before, after)  # planned and hit
        assert after["misses"] == before["misses"]
        wait_until(lambda: str(a.id()) in bridge.tableRdds().split(","), "a's priorities")
        assert after["resyncs"] == 1 and after["degraded"] is None
    finally:
        spark.stop()


def executor_pids(app_id: str) -> dict[str, int]:
    """Executor id -> pid of this application's executor JVMs (local-cluster's children)."""
    out = {}
    for proc in Path("/proc").iterdir():
        try:
            if not proc.name.isdigit():
                continue
            args = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "org.apache.spark.executor.CoarseGrainedExecutorBackend" in args and app_id in args:
            out[args[args.index("--executor-id") + 1]] = int(proc.name)
    return out


def spark_locations(sc, rdd_id: int, parts: int) -> dict[tuple[int, int], set[str]]:
    """Block -> executors holding it, per Spark's own status store (its AppStatusListener drops
    a lost executor's partitions itself)."""
    held = spark_block_holders(sc, rdd_id)
    return {(rdd_id, p): held.get(p, set()) for p in range(parts)}


def brain_locations(brain, rdd_id: int, parts: int) -> dict[tuple[int, int], set[str]]:
    return {(rdd_id, p): set(brain.planner.locations.get((rdd_id, p), ())) for p in range(parts)}


@pytest.mark.cluster
def test_an_executor_killed_mid_job_loses_its_blocks_and_its_replacement_gets_the_table():
    """SIGKILL one of two executor JVMs while a job reads a cached RDD. Spark reruns the lost
    tasks, and its standalone worker starts a replacement executor. Checked: the job's result is
    plain Spark's; the brain no longer believes the dead executor holds blocks (Spark sends no
    block update for them: only the executor's removal says so), its view of where each block
    lives equals Spark's BlockManagerMaster; the replacement installs the plugin and applies the
    table version in force; later jobs are right too."""
    spark = start_session("local-cluster[2,1,1024]", "lrc")
    try:
        sc = spark.sparkContext
        bridge = sc._jvm.org.sparklrc.LrcBridge
        a = sc.parallelize(range(N), PARTS).map(lambda x: (x % 7, x)).cache()
        assert a.count() == N
        brain = active_brain()
        pids = wait_until(lambda: len(p := executor_pids(sc.applicationId)) == 2 and p,
                          "two executor JVMs")
        brain.sync()
        held = brain_locations(brain, a.id(), PARTS)
        victim = next(ex for ex in sorted(pids) if any(ex in w for w in held.values()))

        def slow(it):
            time.sleep(1.0)  # the job outlives the kill by seconds
            return [sum(v for _, v in it)]

        result: list[int] = []

        def run_job():  # job groups are per thread
            sc.setJobGroup("victim", "the job an executor dies under")
            result.append(a.mapPartitions(slow).sum())

        job = threading.Thread(target=run_job)
        job.start()
        tracker = sc.statusTracker()
        wait_until(lambda: tracker.getJobIdsForGroup("victim"), "the job to start")
        os.kill(pids[victim], signal.SIGKILL)
        running = [j for j in tracker.getJobIdsForGroup("victim")
                   if (info := tracker.getJobInfo(j)) and info.status == "RUNNING"]
        job.join(120)
        assert result == [sum(range(N))], "the job's result survives the lost executor"
        assert running, "the executor died while the job ran"

        # the replacement registers, installs the plugin and gets the table in force
        replacement = wait_until(
            lambda: next((ex for ex in executor_pids(sc.applicationId)
                          if ex not in pids), None), "a replacement executor", timeout=90)
        def installed():
            brain.sync()
            return brain.stats()["executors"].get(replacement, {}).get("installed")
        wait_until(installed, "the plugin on the replacement")
        assert a.values().sum() == sum(range(N))  # tasks on both executors
        brain.sync()
        version = bridge.tableVersion()
        def applied():
            brain.sync()
            return brain.stats()["executors"][replacement]["table_version"] >= version
        wait_until(applied, f"the replacement applying table version {version}")

        # where blocks live, per the brain, is Spark's view: none on the dead executor
        sc._jsc.sc().listenerBus().waitUntilEmpty()
        brain.sync()
        now = brain_locations(brain, a.id(), PARTS)
        assert not any(victim in w for w in now.values()), now
        assert now == spark_locations(sc, a.id(), PARTS)
        assert victim not in brain.executors and replacement in brain.executors
        assert brain.stats()["degraded"] is None
        assert sorted(a.reduceByKey(lambda x, y: x + y).collect()) == sorted(
            (k, sum(x for x in range(N) if x % 7 == k)) for k in range(7))
    finally:
        spark.stop()



def in_thread(action) -> tuple[threading.Thread, list]:
    """A Spark action run in a thread (it waits on gates); its result lands in the list."""
    result: list = []
    job = threading.Thread(target=lambda: result.append(action()))
    job.start()
    return job, result


def release_and_finish(sc, brain, job, result: list, want, *gates: str) -> None:
    """Opens the gates: the job returns ``want``; once Spark's listeners and the brain caught up,
    no reference is left and the brain never degraded."""
    for g in gates:
        os.remove(g)
    job.join(120)
    assert result == [want]
    sc._jsc.sc().listenerBus().waitUntilEmpty()
    brain.sync()
    with brain._lock:
        assert not any(brain.planner.refs.count.values())
        assert brain.stats()["degraded"] is None


def planned_map_stage(brain) -> tuple | None:
    """(stage, its partitions holding references, every count) of a map stage the brain holds
    references for, or None."""
    brain.sync()
    with brain._lock:
        refs = brain.planner.refs
        return next(((s, set(refs.pending[s]), dict(refs.count))
                     for s, st in brain.planner.dag.stages.items()
                     if st.shuffle >= 0 and refs.pending.get(s)), None)


@pytest.mark.cluster
def test_a_map_stage_that_recomputes_lost_output_references_only_what_it_recomputes(tmp_path):
    """An executor dies after a job wrote a shuffle: Spark drops the map outputs it held, and
    the next job over that shuffle runs its map stage (listed under a new id; the brain
    predicted it skipped) on the lost partitions only. While those tasks wait on a gate, the
    brain holds references for some but not all of the stage's partitions - those the listener
    read from Spark's scheduler at the submission - which are exactly the tasks Spark then runs
    (the code before planned the whole stage: every block of the cached input counted once).
    The job ends with plain Spark's result and no reference left."""
    spark = start_session("local-cluster[2,1,1024]", "lrc",
                          {"spark.lrc.tracePath": str(tmp_path / "trace.json")})
    try:
        sc = spark.sparkContext
        gate = str(tmp_path / "gate")

        def through_gate(x):
            while os.path.exists(gate):
                time.sleep(0.05)
            return (x % PARTS, x)

        a = sc.parallelize(range(N), PARTS).cache()
        assert a.count() == N
        pairs = a.map(through_gate).partitionBy(PARTS)
        assert pairs.count() == N  # writes the shuffle on both executors
        brain = active_brain()
        pids = wait_until(lambda: len(p := executor_pids(sc.applicationId)) == 2 and p,
                          "two executor JVMs")
        brain.sync()
        victim = next(ex for ex in sorted(pids)
                      if any(ex in w for w in brain_locations(brain, a.id(), PARTS).values()))
        os.kill(pids[victim], signal.SIGKILL)

        def removed():  # (Spark tells its scheduler, which drops the outputs, before listeners)
            brain.sync()
            return victim not in brain.executors
        wait_until(removed, "Spark to remove the killed executor")

        open(gate, "w").close()
        job, result = in_thread(pairs.count)
        stage, registered, counts = wait_until(lambda: planned_map_stage(brain),
                                               "the brain planning the map stage again", timeout=90)
        assert 0 < len(registered) < PARTS, registered
        assert {q: counts.get((a.id(), q), 0) for q in range(PARTS)} == {
            q: int(q in registered) for q in range(PARTS)}
        release_and_finish(sc, brain, job, result, N, gate)
        with brain._lock:
            ran = {e.partition for e in brain.recorder.events
                   if e.kind == "task" and e.stage_id == stage}
        assert ran == registered, "the tasks Spark ran are those the brain referenced"
    finally:
        spark.stop()


@pytest.mark.cluster
def test_map_tasks_spark_reruns_after_their_executor_died_reference_their_reads_again(tmp_path):
    """An executor dies while a map stage runs: Spark runs again, in the same attempt, the map
    tasks that had finished there (their output died with it; their ends come again, as
    `Resubmitted`). The brain references their reads again until the reruns end, and the trace
    holds each run once - a resubmission is no run. Every rerun (task attempt > 0) and two
    partitions of the first attempt wait on a gate, so nothing ends while the state is read."""
    spark = start_session("local-cluster[2,1,1024]", "lrc",
                          {"spark.lrc.tracePath": str(tmp_path / "trace.json")})
    try:
        sc = spark.sparkContext
        gate, gated = str(tmp_path / "gate"), {PARTS - 2, PARTS - 1}

        def through_gate(idx, it):
            from pyspark import TaskContext
            if idx in gated or TaskContext.get().attemptNumber() > 0:
                while os.path.exists(gate):
                    time.sleep(0.05)
            return ((x % PARTS, x) for x in it)

        a = sc.parallelize(range(N), PARTS).cache()
        assert a.count() == N
        pairs = a.mapPartitionsWithIndex(through_gate).partitionBy(PARTS)
        brain = active_brain()
        pids = wait_until(lambda: len(p := executor_pids(sc.applicationId)) == 2 and p,
                          "two executor JVMs")
        open(gate, "w").close()
        job, result = in_thread(pairs.count)
        stage = wait_until(lambda: planned_map_stage(brain), "the map stage planned")[0]

        def runs() -> dict[int, list[str]]:
            brain.sync()
            with brain._lock:
                out: dict[int, list[str]] = {}
                for e in brain.recorder.events:
                    if e.kind == "task" and e.stage_id == stage:
                        out.setdefault(e.partition, []).append(e.executor)
                return out
        tracker = sc.statusTracker()
        def gated_running() -> bool:
            info = tracker.getStageInfo(stage)
            return info is not None and info.numActiveTasks == len(gated)
        done = wait_until(lambda: len(r := runs()) == PARTS - len(gated) and gated_running() and r,
                          "every ungated task ended and both gated tasks running")
        victim = next(ex for ex in sorted(pids) if any(ex in w for w in done.values()))
        lost = {q for q, w in done.items() if victim in w}
        os.kill(pids[victim], signal.SIGKILL)

        def pending() -> set[int]:
            brain.sync()
            with brain._lock:
                return set(brain.planner.refs.pending.get(stage, ()))
        wait_until(lambda: lost <= pending(), f"map tasks {sorted(lost)} referenced again")
        with brain._lock:
            counts = dict(brain.planner.refs.count)
            assert set(brain.planner.refs.pending[stage]) == lost | gated
        assert {q: counts.get((a.id(), q), 0) for q in range(PARTS)} == {
            q: int(q in lost | gated) for q in range(PARTS)}
        release_and_finish(sc, brain, job, result, N, gate)
        ran = runs()
        assert {q: len(w) for q, w in ran.items()} == {q: 1 + (q in lost) for q in range(PARTS)}
    finally:
        spark.stop()


def test_a_stage_rerun_after_a_fetch_failure_references_the_tasks_it_runs_again(tmp_path):
    """A shuffle file is deleted under Spark, so the next job's reduce tasks hit a real fetch
    failure: the attempt fails (the brain drops its references), Spark reruns the map stage and
    then the result stage as a new attempt. The result stage unions the shuffle's partitions with
    a cached RDD's one partition. Gates hold what would end too soon: the cached partition's
    task until the end (so it finishes in no attempt before), the map stage's rerun until the
    brain saw the first attempt fail, and from then on every task of the result stage. Checked
    once the brain saw the second attempt: it references exactly the tasks that attempt runs,
    the cached block's read included - the code before referenced none (the failed attempt had
    dropped them all). Spark's event log of the run gives the what-if the same: its trace's
    second attempt of the result stage computes the partitions of that attempt's tasks, and a
    replay references each of them."""
    local, events = tmp_path / "local", tmp_path / "events"
    events.mkdir()
    spark = start_session("local[2]", "lrc", {"spark.lrc.tracePath": str(tmp_path / "trace.json"),
                                              "spark.local.dir": str(local),
                                              "spark.eventLog.enabled": "true",
                                              "spark.eventLog.dir": f"file:{events}"})
    try:
        sc = spark.sparkContext
        map_gate, cached_gate, result_gate = (str(tmp_path / g) for g in ("map", "cached", "all"))

        def wait_while(path):
            while os.path.exists(path):
                time.sleep(0.05)

        def map_waits(it):
            wait_while(map_gate)
            return ((x % PARTS, x) for x in it)

        def result_waits(idx, it):
            wait_while(result_gate)
            if idx == PARTS:  # (the cached RDD's partition: the union lists it after the shuffle's)
                wait_while(cached_gate)
            return it

        b = sc.parallelize(range(N), 1).map(lambda x: (x % 7, x)).cache()
        assert b.count() == N
        pairs = sc.parallelize(range(N), PARTS).mapPartitions(map_waits).partitionBy(PARTS)
        assert pairs.count() == N  # writes the shuffle
        brain = active_brain()
        data = sorted(local.rglob("shuffle_*.data"))
        assert len(data) == PARTS, data
        data[0].unlink()
        for g in (map_gate, cached_gate):
            open(g, "w").close()

        def run_job():  # job groups are per thread
            sc.setJobGroup("fetch", "the job whose reduce tasks lose a map output")
            return pairs.union(b).mapPartitionsWithIndex(result_waits).count()
        job, result = in_thread(run_job)
        tracker = sc.statusTracker()
        (job_id,) = wait_until(lambda: tracker.getJobIdsForGroup("fetch"), "the job to start")
        stage = max(tracker.getJobInfo(job_id).stageIds)  # its result stage

        def seen(kind: str, times: int):
            def pred():
                brain.sync()
                with brain._lock:
                    events = brain.recorder.events
                    if sum(e.kind == kind and e.stage_id == stage for e in events) >= times:
                        return len(events), dict(brain.planner.refs.pending.get(stage, {}))
            return pred
        wait_until(seen("stage_completed", 1), "the first attempt to fail", timeout=90)
        open(result_gate, "w").close()
        os.remove(map_gate)
        n, pending = wait_until(seen("stage_submitted", 2), "the second attempt", timeout=90)
        release_and_finish(sc, brain, job, result, 2 * N, result_gate, cached_gate)
        with brain._lock:
            later = {e.partition for e in brain.recorder.events[n:]
                     if e.kind == "task" and e.stage_id == stage}
        assert set(pending) == later == set(range(PARTS + 1)), (sorted(pending), later)
        assert (b.id(), 0) in pending[PARTS]
    finally:
        spark.stop()
    (log,) = events.iterdir()
    trace = read_eventlog(log).trace
    submitted = [e for e in trace.events if e.kind == "stage_submitted" and e.stage_id == stage]
    # every reduce task failed the first attempt; the cached partition's task of the first
    # attempt, still running, may end first and spare the second attempt its copy
    rerun = submitted[1].partitions
    assert submitted[0].partitions is None and set(range(PARTS)) <= set(rerun) <= set(pending)
    planner = Planner("lrc", predict=False)
    for e in trace.events:
        feed_planner(planner, trace.dag, e, executor="0")
        if e is submitted[1]:
            assert tuple(sorted(planner.refs.pending[stage])) == rerun
    assert not any(planner.refs.count.values()) and planner.refs.negative_decrements == 0
