"""What the live brain charges a miss of a block it has not measured yet (lrc.cost.MissCosts)."""
import pytest

from lrc.cost import UNKNOWN, MissCosts
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


def test_a_block_costs_the_time_of_the_task_that_built_it():
    """A partition 8x its siblings' size took about 8x as long to build: per byte it costs what
    they do. Over its own size with the RDD's mean time it looked 8x cheaper - the first block
    crd evicts, or refuses to store (GraphX SVD++'s partition 0); the rule before stays
    available as ``per_block=False``."""
    new, old = MissCosts(), MissCosts(per_block=False)
    for costs in (new, old):
        for p, (nbytes, seconds) in enumerate(((800, 8.0), (100, 1.0), (100, 1.0), (100, 2.0))):
            costs.sized((5, p), nbytes)
            costs.task_time(5, seconds, p)
        costs.task_time(5, 3.0)  # a task whose block is not known: the mean only
    assert costs.rebuild_s[5] == new.rebuild_s[5] == pytest.approx(3.0)
    assert [new.density((5, p)) for p in range(4)] == pytest.approx([0.01, 0.01, 0.01, 0.02])
    assert [old.density((5, p)) for p in range(4)] == pytest.approx([3 / 800] + [3 / 100] * 3)
    new.sized((5, 4), 300)  # a block whose building task was not measured: the RDD's mean
    assert new.density((5, 4)) == pytest.approx(3.0 / 300)
    new.forget(5, [(5, p) for p in range(5)])
    assert not new.part_s and new.density((5, 0)) == UNKNOWN


def test_the_planner_times_a_block_by_the_task_of_its_partition():
    from lrc.dag import Dependency, Job, RDD, Stage
    from lrc.planner import Planner

    planner = Planner("crd")
    rdds = [RDD(1, 4, (), cached=True), RDD(2, 4, (Dependency(1),)),
            RDD(3, 2, (Dependency(1, "range", 0, 0, 2),), cached=True)]
    planner.add_job(Job(0, (0, 1)), [Stage(0, 2, 4), Stage(1, 3, 2)], rdds)
    costs = planner.refs.costs
    planner.task_finished(0, 2, 5.0)
    planner.task_finished(1, 0, 7.0)  # stage 1's RDD has 2 partitions, cached RDD 3 too
    assert costs.part_s == {1: {2: 5.0}, 3: {0: 7.0}}
    assert costs.rebuild_s == {1: 5.0, 3: 7.0}
