"""The brain's half of GPU placement (spark_plugin.gpu_moves) over a real Planner, no JVM: which
blocks move where, within the per-stage budget, when a move is done, what is withdrawn, and what
its stats count."""
from __future__ import annotations

import pytest

from lrc.dag import RDD, Dependency, Job, Stage
from lrc.planner import Planner
from spark_plugin import wire
from spark_plugin.gpu_moves import GpuPlacement

PARTS = 4
EXECS = {"0": {"resources": {}}, "1": {"resources": {"gpu": ["0"]}},
         "2": {"resources": {"gpu": ["0", "1"]}}}


def planner_with_gpu_job(gpus: float = 1.0) -> tuple[Planner, list[Stage]]:
    """RDD 1 cached (PARTS blocks of 100 bytes on executor 0); job 1's only stage (2) maps it."""
    p = Planner("lrc")
    data = RDD(1, PARTS, cached=True, storage_level="MEMORY_ONLY")
    out = RDD(2, PARTS, deps=(Dependency(1, "one_to_one"),))
    p.add_job(Job(0, (1,)), [Stage(1, 1, PARTS, job_id=0)], [data])
    for part in range(PARTS):
        p.block_cached((1, part), "0", 100)
    stages = [Stage(2, 2, PARTS, job_id=1, gpus=gpus)]
    p.add_job(Job(1, (2,)), stages, [data, out])
    return p, stages


def moves_of(text: str) -> dict[tuple[int, int], tuple[str, int, bool]]:
    out = {}
    for item in filter(None, text.split(";")):
        rdd, part, target, nbytes, done = item.split(",")
        out[(int(rdd), int(part))] = (target, int(nbytes), done == "1")
    return out


def test_inputs_of_a_gpu_stage_move_to_gpu_executors_balanced_by_bytes():
    p, stages = planner_with_gpu_job()
    g = GpuPlacement(budget_bytes=1 << 20)
    g.job_started(1, stages)
    moves = moves_of(g.update(p, EXECS))
    assert set(moves) == {(1, part) for part in range(PARTS)}
    assert sorted(t for t, _, _ in moves.values()) == ["1", "1", "2", "2"]  # never "0"
    assert all(n == 100 and not done for _, n, done in moves.values())
    assert g.update(p, EXECS) is None  # unchanged: nothing to send


def test_the_budget_bounds_each_stage_and_cpu_stages_move_nothing():
    p, stages = planner_with_gpu_job()
    g = GpuPlacement(budget_bytes=250)
    g.job_started(1, stages)
    assert len(moves_of(g.update(p, EXECS))) == 2
    p2, cpu = planner_with_gpu_job(gpus=0.0)
    g2 = GpuPlacement(budget_bytes=1 << 20)
    g2.job_started(1, cpu)
    assert g2.update(p2, EXECS) is None and not g2.moves


def test_placement_off_moves_nothing_but_still_counts_gpu_stage_reads():
    p, stages = planner_with_gpu_job()
    g = GpuPlacement(budget_bytes=1 << 20, enabled=False)
    g.job_started(1, stages)
    assert g.update(p, EXECS) is None and not g.moves
    g.task_read("1", True, 2, [(1, 0)], set(), set(), p.locations, p.refs.costs.size)
    assert g.stats()["gpu_stage_remote_reads"] == 1


def test_no_gpu_executor_no_move_and_blocks_already_on_one_stay():
    p, stages = planner_with_gpu_job()
    g = GpuPlacement(budget_bytes=1 << 20)
    g.job_started(1, stages)
    assert moves_of(g.update(p, {"0": EXECS["0"]}) or "") == {}
    p.block_cached((1, 0), "2", 100)
    assert (1, 0) not in moves_of(g.update(p, EXECS))


def test_a_copy_on_the_target_marks_the_move_done_and_counts_the_saving():
    p, stages = planner_with_gpu_job()
    g = GpuPlacement(budget_bytes=1 << 20)
    g.job_started(1, stages)
    target = moves_of(g.update(p, EXECS))[(1, 0)][0]
    p.block_cached((1, 0), target, 100)
    assert moves_of(g.update(p, EXECS))[(1, 0)] == (target, 100, True)
    sizes = p.refs.costs.size
    g.task_read(target, True, 2, [(1, 0)], {(1, 0)}, set(), p.locations, sizes)
    g.task_read("1" if target == "2" else "2", True, 2, [(1, 1)], set(), set(), p.locations, sizes)
    g.task_read("0", False, 3, [(1, 2)], {(1, 2)}, set(), p.locations, sizes)  # a CPU stage
    s = g.stats()
    assert s["moved"] == 1 and s["bytes_moved"] == 100 and s["bytes_saved"] == 100
    assert s["gpu_stage_reads"] == 2 and s["gpu_stage_local_reads"] == 1
    assert s["gpu_stage_remote_reads"] == 1 and s["gpu_stage_remote_bytes"] == 100
    assert s["moved_blocks"] == {"rdd_1_0": target} and s["gpu_stages_served_locally"] == []
    p.block_removed((1, 0), target)  # evicted on the GPU executor: the CPU copy is no longer
    moves = moves_of(g.update(p, EXECS))  # demoted; the pending GPU stage plans it again
    assert moves[(1, 0)][2] is False


def test_moves_are_withdrawn_when_the_rdd_is_unpersisted_or_the_target_leaves():
    p, stages = planner_with_gpu_job()
    g = GpuPlacement(budget_bytes=1 << 20)
    g.job_started(1, stages)
    moves = moves_of(g.update(p, EXECS))
    gone = {k: v for k, v in EXECS.items() if k != moves[(1, 0)][0]}
    assert all(t in gone for t, _, _ in moves_of(g.update(p, gone)).values())
    g.stage_completed(2)
    p.rdd_unpersisted(1)
    assert g.update(p, EXECS) == ""  # every move withdrawn, sent once
    assert g.update(p, EXECS) is None


def test_encode_moves_format_and_bad_executor_ids():
    assert wire.encode_moves([((3, 1), "7", 2048, True), ((3, 2), "8", 10, False)]) == \
        "3,1,7,2048,1;3,2,8,10,0"
    with pytest.raises(ValueError):
        wire.encode_moves([((3, 1), "a;b", 1, False)])
