"""Predicted references on real Spark (local SparkSession, plugin and brain attached): after two
iterations of a loop, the next iteration's inputs carry references before its job is submitted;
superseded generations carry none; when the loop ends, nothing predicted is left behind; a
loop's first iteration leaves its cached input a read, and so does what the application used
lately, but not what only fed another cached RDD. And a map stage Spark lists again under
a new id, for a shuffle already written, is not planned."""
from __future__ import annotations

import threading
import time
from operator import add

import pytest
from pyspark.sql import SparkSession

from conftest import BASE_CONF, policy_session
from jvm_shim.testing import restart_jvm_if_needed
from spark_plugin import session

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark():
    restart_jvm_if_needed()
    s = policy_session("spark-lrc-predict", BASE_CONF, "crd")
    yield s
    s.stop()


def _settled():
    """The brain, once every listener event Spark has posted so far is applied (the listener
    bus is asynchronous: an action can return before its job's end is delivered)."""
    SparkSession.getActiveSession().sparkContext._jsc.sc().listenerBus().waitUntilEmpty()
    brain = session.active_brain()
    brain.sync()
    return brain


def _refs(rdd_id: int, parts: int) -> list[int]:
    brain = _settled()
    return [brain.planner.refs.refs((rdd_id, p)) for p in range(parts)]


def _predicted() -> list[int]:
    brain = _settled()
    return list(brain.planner.predicted)


def iterate(links, ranks):
    """One iteration (one job, always submitted from this line: its call site)."""
    new = links.join(ranks).mapValues(lambda v: 0.15 + 0.85 * v[1]).cache()
    new.count()
    return new


def test_an_iterative_pyspark_job(spark):
    sc = spark.sparkContext
    links = sc.parallelize([(i, i % 7) for i in range(400)], 4).partitionBy(4).cache()
    gens = [links.mapValues(lambda _: 1.0).cache()]
    gens[0].count()
    for _ in range(2):  # two iterations of the loop
        gens.append(iterate(links, gens[-1]))
    # no job is running: every reference is predicted, for the third iteration
    assert _predicted()
    assert _refs(links.id(), 4) == [1, 1, 1, 1]
    assert _refs(gens[-1].id(), 4) == [1, 1, 1, 1], "the newest generation inherits the reads"
    for dead in gens[:-1]:
        assert _refs(dead.id(), 4) == [0, 0, 0, 0], "a superseded generation has none"

    gens.append(iterate(links, gens[-1]))  # the prediction comes true
    assert _settled().planner.predictor.fails == {}
    assert _refs(gens[-1].id(), 4) == [1, 1, 1, 1] and _refs(gens[-2].id(), 4) == [0] * 4

    # the loop ends: the application does something else; no predicted job stays, only the
    # newest generation's one read per block (the loop's state, read after it: lrc.predicted)
    assert gens[-1].map(lambda kv: kv[1]).sum() > 0
    assert len(_predicted()) == 1
    assert _refs(gens[-1].id(), 4) == [1, 1, 1, 1]
    for r in [links, *gens[:-1]]:
        assert _refs(r.id(), 4) == [0, 0, 0, 0]


def test_a_dataframe_job(spark):
    df = spark.range(2000, numPartitions=4).selectExpr("id", "id % 13 AS k").cache()
    df.count()
    for i in range(2):
        assert df.where(f"k = {i}").count() > 0
    brain = _settled()
    cached = [r for r in brain.planner.dag.rdds.values() if r.cached and "k" in r.name]
    assert cached, "the DataFrame's cached RDD is known to the brain"
    rdd = max(cached, key=lambda r: r.id)
    assert all(n >= 1 for n in _refs(rdd.id, rdd.num_partitions)), \
        "the next query's read of the cached DataFrame is predicted"


def test_a_loops_first_iteration_leaves_its_cached_input_a_read(spark):
    """ml's shape: a cached input, then an iteration's job that caches nothing. After the first
    iteration no pattern is known and nothing is predicted; the input it read keeps one read
    per block (spark.lrc.predictReuse) instead of ranking with the dead until the loop repeats."""
    sc = spark.sparkContext
    train = sc.parallelize(range(800), 4).map(lambda i: (i % 8, i)).cache()
    assert train.count() == 800
    assert len(train.reduceByKey(add).collect()) == 8  # the first iteration
    assert _refs(train.id(), 4) == [1, 1, 1, 1]


def test_what_the_application_used_keeps_a_read_and_what_only_fed_it_none(spark):
    """zip's shape: `base` cached, `x` and `y` built from it and cached by their counts, then a
    job that reads `x` alone and caches nothing, a kind never seen: nothing is predicted after
    it. `x`, read by it, and `y`, cached and not read since, keep one read per block
    (spark.lrc.predictReuse: the application cached them to reuse them); `base`, which only
    fed them, has none. Named as `workloads/zip.py` names them: PySpark creates every RDD at one
    JVM call site, so unnamed RDDs first computed by one line of Python are one dataset's
    generations to the predictor (`lrc.predict.dataset_name`)."""
    sc = spark.sparkContext
    base = sc.parallelize(range(800), 4).map(lambda i: (i, i)).setName("base").cache()
    x = base.mapValues(lambda v: 2 * v).setName("x").cache()
    y = base.mapValues(lambda v: 3 * v).setName("y").cache()
    assert x.count() == 800 and y.count() == 800
    assert x.values().sum() == 2 * sum(range(800))
    assert _refs(x.id(), 4) == _refs(y.id(), 4) == [1, 1, 1, 1]
    assert _refs(base.id(), 4) == [0, 0, 0, 0]


def test_a_map_stage_listed_again_under_a_new_id_is_not_planned(spark, tmp_path):
    """Spark forgets a finished job's stages; the next job over the same shuffle lists its map
    stage under a new id and skips it. While that job's result stage runs (held by a flag file),
    the brain has registered no task of the listed map stage: its reads of the cached input never
    happen, so they must not count."""
    sc = spark.sparkContext
    base = sc.parallelize(range(400), 4).cache()
    shuffled = base.map(lambda i: (i % 5, i)).reduceByKey(add, 2)
    before = set(_settled().planner.written)
    assert shuffled.count() == 5  # job 1: its map stage reads `base` and writes the shuffle
    written = set(_settled().planner.written) - before
    assert len(written) == 1, "the map stage's shuffle id reached the brain"
    flag = tmp_path / "go"

    def held(it):
        while not flag.exists():
            time.sleep(0.01)
        return it

    counted = []
    job = threading.Thread(target=lambda: counted.append(shuffled.mapPartitions(held).count()))
    job.start()
    try:
        deadline, again = time.time() + 60, []
        while not again and time.time() < deadline:
            brain = _settled()
            dag = brain.planner.dag
            again = [s for j in brain.planner.running if j in dag.jobs for s in dag.jobs[j].stage_ids
                     if s in dag.stages and dag.stages[s].shuffle in written]
            time.sleep(0.05)
        assert again, "the second job's start reached the brain"
        for s in again:
            if s in brain.planner.completed:
                continue  # (Spark kept the first job's stage: the same id, skipped as before)
            assert s not in brain.planner.planned and not brain.planner.refs.pending.get(s), \
                f"map stage {s} (shuffle already written) was planned"
    finally:
        flag.touch()
        job.join()
    assert counted == [5]
