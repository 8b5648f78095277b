"""The brain's counters (spark_plugin.metrics): what a planned read counts as, per executor and per
RDD, without a JVM."""
from spark_plugin.metrics import OLDER, PER_RDD, Metrics, RecentCounter


def test_planned_reads_count_as_hits_remote_hits_or_misses_per_executor_and_per_rdd():
    m = Metrics(policy="lrc")
    elsewhere = {(2, 0)}  # in some other executor's memory
    # task 1 reads rdd 1 p0 locally, rdd 2 p0 remotely (not recomputed), recomputes rdd 1 p1
    m.task("1", planned_reads=[(1, 0), (2, 0), (1, 1)], hits={(1, 0)}, puts={(1, 1)},
           evicted=[(3, 4)], in_memory_somewhere=lambda b: b in elsewhere)
    # task 2 reads rdd 2 p0 recomputed although cached elsewhere (a put): a miss
    m.task("2", planned_reads=[(2, 0)], hits=set(), puts={(2, 0)}, evicted=[],
           in_memory_somewhere=lambda b: b in elsewhere)
    # task 3 plans no read: not counted for effective hits
    m.task("2", planned_reads=[], hits=set(), puts=set(), evicted=[], in_memory_somewhere=lambda b: False)
    s = m.snapshot()
    assert (s["tasks"], s["hits"], s["remote_hits"], s["misses"]) == (3, 2, 1, 2)
    assert s["hit_ratio"] == 0.5 and s["effective_hits"] == 0 and s["tasks_with_reads"] == 2
    assert s["hits_per_rdd"] == {"1": 1, "2": 1} and s["misses_per_rdd"] == {"1": 1, "2": 1}
    assert s["evictions_per_rdd"] == {"3": 1} and s["evictions_per_executor"] == {"1": 1, "2": 0}
    assert sum(s["hits_per_rdd"].values()) == s["hits"]
    assert sum(s["misses_per_rdd"].values()) == s["misses"]


def test_a_task_whose_every_planned_read_hits_is_an_effective_hit():
    m = Metrics(policy="lerc")
    m.task("1", planned_reads=[(1, 0), (1, 1)], hits={(1, 0), (1, 1)}, puts=set(), evicted=[],
           in_memory_somewhere=lambda b: True)
    s = m.snapshot()
    assert s["effective_hits"] == 1 and s["effective_hit_ratio"] == 1.0 and s["hits_per_rdd"] == {"1": 2}


def test_per_rdd_counts_keep_the_most_recent_rdds_and_sum_the_others_under_older():
    c = RecentCounter(limit=3)
    for rdd in (1, 2, 3, 1, 4, 5):  # 1 counted again before 4 and 5 arrive: 2 and 3 go first
        c.add(rdd)
    assert c.as_dict() == {"1": 2, "4": 1, "5": 1, OLDER: 2} and len(c) == 4


def test_an_application_caching_thousands_of_rdds_keeps_its_stats_bounded_and_whole():
    m = Metrics(policy="lrc")
    for rdd in range(3 * PER_RDD):  # one task per RDD: a hit, a miss, an eviction
        m.task("1", planned_reads=[(rdd, 0), (rdd, 1)], hits={(rdd, 0)}, puts={(rdd, 1)},
               evicted=[(rdd, 2)], in_memory_somewhere=lambda b: False)
    s = m.snapshot()
    for key in ("hits_per_rdd", "misses_per_rdd", "evictions_per_rdd"):
        assert len(s[key]) == PER_RDD + 1 and s[key][OLDER] == 2 * PER_RDD
        assert str(3 * PER_RDD - 1) in s[key] and "0" not in s[key]
    assert sum(s["hits_per_rdd"].values()) == s["hits"] == 3 * PER_RDD
    assert sum(s["evictions_per_rdd"].values()) == s["evictions"]


def test_in_force_counts_an_executor_that_came_up_after_the_job_start_from_its_start_up():
    """A warm driver's first job starts while the executor JVMs still launch: an executor that
    comes up later gets the table with its first ask, and its start-up is not the plan's latency
    (seen as 7-8 s outliers of plan_latency --runs 3). Executors there from the start count from
    the job's start, as before. The same holds for each version's push lag."""
    m = Metrics("lrc")
    m.executor_plugin("1", True, "", now_ms=0.0)
    m.planned([(7, 1000.0)], version=3, now_ms=1040.0)
    m.executor_plugin("2", True, "", now_ms=7000.0)  # came up 6 s after the job start
    m.table_applied("1", 3, lag_ms=5.0)
    assert list(m.in_force_ms) == []  # every installed executor is needed
    m.table_applied("2", 3, lag_ms=6040.0)  # its first ask, 80 ms after it came up
    assert list(m.in_force_ms) == [80.0]
    m.planned([(8, 8000.0)], version=4, now_ms=8030.0)  # both up before this job
    m.table_applied("1", 4, lag_ms=2.0)
    m.table_applied("2", 4, lag_ms=10.0)
    assert list(m.in_force_ms) == [80.0, 40.0]
    # and the push lag too: executor 2's first version counts from its start-up, not the
    # publish 6 s before it (the multi-second lags of a driver's second SparkContext)
    assert list(m.push_lag_ms) == [5.0, 80.0, 2.0, 10.0]


def test_plugin_cpu_sums_executors_latest_reports_and_the_driver_parts():
    """Executors report their plugin CPU so far with each task: the latest (largest) report
    counts, even when reports arrive out of order; executors add up; the driver JVM's parts come
    as given (its own task-hook count, in local mode the same JVM's, is not taken)."""
    m = Metrics("lrc")
    m.executor_cpu("0", 2_000_000, 10_000_000)
    m.executor_cpu("0", 1_000_000, 9_000_000)  # an older report, late
    m.executor_cpu("1", 500_000_000, 0)
    cpu = m.plugin_cpu({"listener": 300_000_000, "brain_calls": 1_200_000_000, "task_hooks": 7},
                       brain_s=0.25)
    assert cpu == {"listener": 0.3, "executor_events": 0.0, "table_requests": 0.0,
                   "brain_calls": 1.2, "table_hold": 0.0, "task_hooks": 0.502, "table_watch": 0.01,
                   "brain": 0.25, "total": 2.262}
