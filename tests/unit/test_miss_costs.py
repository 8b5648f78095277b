"""What the live brain charges a miss of a block (lrc.cost.MissCosts): one it has not measured
yet, and one whose rebuild reaches RDDs the application has unpersisted."""
import pytest

from lrc.cost import UNKNOWN, MissCosts, cached_ancestors
from lrc.dag import RDD, AppDAG, Dependency, Job, Stage
from lrc.planner import Planner
from lrc.policies import get_policy
from lrc.refcount import RefState


def test_with_nothing_measured_every_block_costs_the_same():
    costs = MissCosts()
    costs.sized((1, 0), 100)
    assert costs.density((1, 0)) == costs.density((2, 0)) == UNKNOWN


def test_an_unmeasured_block_costs_the_median_of_the_measured_rdds():
    costs = MissCosts()
    for rdd, seconds, sizes in ((1, 1.0, (100, 300)), (2, 4.0, (100,)), (3, 9.0, (100,))):
        for p, nbytes in enumerate(sizes):
            costs.sized((rdd, p), nbytes)
        costs.task_time(rdd, seconds)
    # per RDD: rebuild time over its mean block size: 1/200, 4/100, 9/100
    assert costs.density((1, 0)) == pytest.approx(1.0 / 100)
    assert costs.density((9, 0)) == pytest.approx(4.0 / 100)  # no rebuild time yet
    assert costs.density((1, 5)) == pytest.approx(4.0 / 100)  # no size yet
    costs.task_time(2, 0.0)  # a running mean: rdd 2 now 2 s, the median with it
    assert costs.density((9, 0)) == pytest.approx(2.0 / 100)
    costs.forget(3, [(3, 0)])
    assert costs.density((9, 0)) == pytest.approx((1.0 / 200 + 2.0 / 100) / 2)
    assert 3 not in costs.rebuild_s and (3, 0) not in costs.size


def test_crd_ranks_an_unmeasured_block_by_its_distance_not_over_every_measured_one():
    """Live, a new RDD is ranked from its job's start, before the first task end that gives its
    rebuild time. A block of it read three stages on must not outrank a measured block of the
    same cost read next (a fixed large unknown density kept it over that block)."""
    refs = RefState(track_order=True)
    for rdd, seconds in ((1, 2.0), (2, 2.0), (3, 2.0)):
        refs.costs.sized((rdd, 0), 1000)
        refs.costs.task_time(rdd, seconds)
    refs.next_ref.update({(1, 0): 1, (2, 0): 3, (7, 0): 3})
    refs.costs.sized((7, 0), 1000)  # stored, its rebuild time not in yet
    priority = get_policy("crd").bind(refs)
    assert priority((7, 0)) == pytest.approx(priority((2, 0)))
    assert priority((7, 0)) < priority((1, 0))


# ---- unpersisted lineage: what GraphX's generations cost to rebuild -----------------------------
def graphx_generations(n: int) -> list[RDD]:
    """GraphX's Pregel / SVD++ shape: generation k (cached) zips generation k-1 with a map of
    it (not cached), so a rebuild of k reaches k-1 along two narrow paths. Generation k is RDD
    2k, its map 2k+1."""
    rdds = [RDD(0, 1, cached=True, storage_level="MEMORY_ONLY")]
    for k in range(1, n + 1):
        rdds.append(RDD(2 * k - 1, 1, (Dependency(2 * k - 2),)))
        rdds.append(RDD(2 * k, 1, (Dependency(2 * k - 2), Dependency(2 * k - 1)),
                        cached=True, storage_level="MEMORY_ONLY"))
    return rdds


def test_the_nearest_cached_ancestors_are_counted_once_per_narrow_path():
    dag = AppDAG()
    for r in graphx_generations(3):
        dag.add_rdd(r)
    assert cached_ancestors(dag, 6) == {4: 2}
    assert cached_ancestors(dag, 0) == {}
    dag.rdds[4].cached = False  # unpersisted: the walk goes through it, twice
    assert cached_ancestors(dag, 6) == {2: 4}
    # a shuffle ends the walk: its output is read, not rebuilt
    dag.add_rdd(RDD(7, 1, (Dependency(6, kind="shuffle"),)))
    dag.add_rdd(RDD(8, 1, (Dependency(7), Dependency(6)), cached=True))
    assert cached_ancestors(dag, 8) == {6: 1}


def test_a_rebuild_recomputes_each_unpersisted_generation_once_per_path():
    """Measured on SVD++ (session 33): a late generation's block, first computed in 0.05 s with
    its parent cached, took 70 s to rebuild after GraphX had unpersisted the earlier ones."""
    dag, costs, own = AppDAG(), MissCosts(), 0.5
    for r in graphx_generations(4):
        dag.add_rdd(r)
        if r.cached:
            costs.lineage(r.id, cached_ancestors(dag, r.id))
            costs.sized((r.id, 0), 1000)
            costs.task_time(r.id, own)
    assert costs.density((8, 0)) == pytest.approx(own / 1000)  # every ancestor still cached
    for k in range(4):  # GraphX unpersists the old generations, oldest first
        costs.forget(2 * k, [(2 * k, 0)])
        # generation j's rebuild: own + 2 x generation j-1's = (2^(j+1) - 1) x own
        assert costs.lost[2 * k] == pytest.approx((2 ** (k + 1) - 1) * own)
    assert costs.density((8, 0)) == pytest.approx((2 ** 5 - 1) * own / 1000)


def test_crd_keeps_the_generation_whose_rebuild_reaches_unpersisted_ones():
    """Two blocks of the same size, own rebuild time and next read: the one computed from an
    unpersisted lineage costs more to lose, so crd ranks it above the other."""
    p = Planner("crd")
    rdds = graphx_generations(2) + [RDD(9, 1, cached=True, storage_level="MEMORY_ONLY")]
    p.add_job(Job(0, (0,)), [Stage(0, 4, 1), Stage(1, 9, 1)], rdds)
    for rdd in (0, 2, 4, 9):
        p.block_cached((rdd, 0), "0", 1000)
    p.task_finished(0, 0, seconds=0.5)  # stage 0 computed RDDs 0, 2 and 4 first
    p.task_finished(1, 0, seconds=0.5)
    p.rdd_unpersisted(0)
    p.rdd_unpersisted(2)
    density = p.refs.costs.density
    assert density((4, 0)) > 3 * density((9, 0))


def test_a_persisted_ancestor_not_read_from_the_blocks_next_read_on_counts_as_lost():
    """It will have been evicted first: the newest generation's parent, still persisted but
    not read after the newest generation's next read (measured on SVD++: charging nothing for
    it, crd ranked the newest generation below older ones and admission refused its blocks)."""
    dag, refs, own = AppDAG(), RefState(track_order=True), 0.5
    costs = refs.costs
    costs.refs = refs
    for r in graphx_generations(3):
        dag.add_rdd(r)
        if r.cached:
            costs.lineage(r.id, cached_ancestors(dag, r.id))
            costs.sized((r.id, 0), 1000)
            costs.task_time(r.id, own)
    # next reads at stage sequence numbers: generation 3 (RDD 6) at 5, generation 2 at 2 only,
    # generation 1 at 2 and 7, generation 0 never
    refs.next_seqs.update({(6, 0): {5: 1}, (4, 0): {2: 1}, (2, 0): {2: 1, 7: 1}})
    refs.next_ref.update({b: min(s) for b, s in refs.next_seqs.items()})
    assert costs.rebuild((4, 0)) == pytest.approx(own)  # generation 1 read at 2 and later
    assert costs.rebuild((2, 0)) == pytest.approx(own + 2 * own)  # generation 0 never again
    # at 5, generation 2 (last read at 2) is gone; generation 1 (read at 7) is still there
    assert costs.rebuild((6, 0)) == pytest.approx(own + 2 * own)
    refs.next_seqs[(2, 0)] = {2: 1}  # generation 1 last read at 2 too: gone at 5 as well
    assert costs.rebuild((6, 0)) == pytest.approx((2 ** 4 - 1) * own)
