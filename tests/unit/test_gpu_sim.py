"""GPU stages in lrc (issue 13, simulator part): the stage field, crd's GPU weight, mixed CPU/GPU
executors and the placement step (lrc/mixed.py). No JVM."""
from __future__ import annotations

import json

import pytest

from lrc.dag import Stage
from lrc.evict import EvictionIndex
from lrc.mixed import Mixed, MixedCluster
from lrc.planner import Planner
from lrc.refcount import RefState
from lrc.sim import CompiledTrace, simulate
from lrc.synth import App, make, o2o, shuffle
from lrc.trace import load_trace, save_trace


@pytest.fixture(scope="module")
def train():
    return CompiledTrace(make("gpu_train"))


def _two_readers(gpus: float):
    """Blocks A and B alike (sizes and costs unknown: equal); a CPU stage reads B, then a stage
    with ``gpus`` reads A."""
    a = App("two", 0, 1)
    A = a.rdd([shuffle(a.rdd())], mb=1, name="A")
    B = a.rdd([shuffle(a.rdd())], mb=1, name="B")
    a.action(A)
    a.action(B)
    a.action(a.rdd([o2o(B)], name="cpu"))
    a.action(a.rdd([o2o(A)], name="gpu"), gpus=gpus)
    return a.trace(), (A, 0), (B, 0)


# ---- crd's weight --------------------------------------------------------------------------
def test_a_block_next_read_by_a_gpu_stage_outranks_an_equal_block_read_by_a_cpu_stage():
    refs = RefState(track_order=True)
    refs.add_task(7, 0, ["gpu-read"], seq=4)
    refs.add_task(8, 0, ["cpu-read"], seq=4)
    crd = Planner("crd").policy.bind(refs)
    assert crd("gpu-read") == crd("cpu-read")  # equal without weights
    refs.seq_weight[4] = 9.0  # (two stages at one position: only a test does that)
    refs.forget_stage(8)
    refs.add_task(8, 0, ["cpu-read"], seq=4)
    assert crd("gpu-read") == crd("cpu-read")  # a weight is per position, not per stage
    refs2 = RefState(track_order=True)
    refs2.add_task(7, 0, ["gpu-read"], seq=4)
    refs2.add_task(8, 0, ["cpu-read"], seq=5)
    crd2 = Planner("crd").policy.bind(refs2)
    assert crd2("gpu-read") > crd2("cpu-read")  # nearer wins without weight
    refs2.seq_weight[5] = 9.0
    assert crd2("cpu-read") > crd2("gpu-read")


@pytest.mark.parametrize("weight, gpu_first", [(8.0, True), (0.0, False)])
def test_the_planner_weighs_gpu_stage_references(weight, gpu_first):
    """B's read (CPU) comes first; A's (GPU) one stage later: weighted, A outranks B."""
    trace, a, b = _two_readers(gpus=1.0)
    p = Planner("crd", profile=trace, gpu_cost_weight=weight)
    assert (p.priority(a) > p.priority(b)) is gpu_first
    assert bool(p.refs.seq_weight) is bool(weight)
    gpu_stage = max(trace.dag.stages)
    p.stage_completed(gpu_stage)
    assert not p.refs.seq_weight  # a finished stage's weight goes with it


def test_a_cpu_only_trace_has_no_weights_and_the_same_priorities():
    trace, a, b = _two_readers(gpus=0.0)
    p, q = Planner("crd", profile=trace), Planner("crd", profile=trace, gpu_cost_weight=0.0)
    assert not p.refs.seq_weight
    assert p.table() == q.table()


def test_predicted_gpu_stages_keep_their_weight():
    """Online, the epochs to come are predicted pseudo-stages: they weigh like the real ones."""
    tr = make("gpu_train")
    dag, p = tr.dag, Planner("crd")
    assert p.predictor is not None
    for e in tr.events:
        if e.kind == "job_start":
            job = dag.jobs[e.job_id]
            rdds = [r for r in dag.lineage_rdds(dag.stages[s].rdd_id for s in job.stage_ids)
                    if r.id not in p.dag.rdds]
            p.add_job(job, [dag.stages[s] for s in job.stage_ids], rdds)
            for r in rdds:  # the job caches what it computes
                for part in range(r.num_partitions if r.cached else 0):
                    p.set_cached((r.id, part), True)
    predicted = {p.refs.stage_seq[s] for s in p.predicted if s in p.refs.stage_seq}
    assert predicted & set(p.refs.seq_weight)
    assert set(p.refs.seq_weight.values()) == {9.0}


def test_gpu_cost_weight_must_be_a_finite_non_negative_number():
    for bad in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="gpu_cost_weight"):
            Planner("crd", gpu_cost_weight=bad)


# ---- mixed executors -----------------------------------------------------------------------
@pytest.mark.parametrize("policy", ["lru", "lrc", "crd", "min"])
@pytest.mark.parametrize("placement", [False, True])
def test_gpu_stage_tasks_run_only_on_gpu_executors(train, policy, placement):
    gpu_tasks = sum(1 for ev in train.events if ev[0] == 2
                    and train.trace.dag.stages[ev[1]].gpus > 0)
    for f in (0.3, 0.7):
        m = simulate(train, policy, f, executors=5, cluster=MixedCluster(2, placement)).mixed
        assert m.gpu_tasks == gpu_tasks > 0
        assert m.gpu_tasks_per_executor[:3] == [0, 0, 0]
        assert all(m.gpu_tasks_per_executor[3:])  # both GPU executors work
        cpu = [t - g for t, g in zip(m.tasks_per_executor, m.gpu_tasks_per_executor)]
        assert cpu[3:] == [0, 0] and all(cpu[:3])


def test_the_override_binds_stages_of_a_trace_without_profiles():
    from lrc.gpu_study import ml_gpu_stages

    tr = make("ml")
    ids = ml_gpu_stages(tr)
    assert ids and not any(s.gpus for s in tr.dag.stages.values())
    r = simulate(tr, "crd", 0.5, cluster=MixedCluster(1, gpu_stages=ids))
    assert r.mixed.gpu_tasks == sum(1 for e in tr.events if e.kind == "task" and e.stage_id in ids)
    assert r.mixed.gpu_tasks_per_executor[:3] == [0, 0, 0]
    assert not any(s.gpus for s in tr.dag.stages.values())  # the trace is not changed


def test_remote_reads_cost_time_only_in_mixed_mode(train):
    one = simulate(train, "lru", 1.0)
    mixed = simulate(train, "lru", 1.0, cluster=MixedCluster(2))
    m = mixed.mixed
    assert m.remote_bytes >= m.gpu_remote_bytes > 0
    assert m.gpu_idle_s == pytest.approx(m.gpu_miss_s + m.gpu_remote_s)
    assert m.gpu_remote_s == pytest.approx(m.gpu_remote_bytes / 100e6)
    assert m.gpu_misses + m.gpu_local_reads < m.gpu_reads  # the rest were remote hits
    assert mixed.reads == one.reads and "gpu_reads" not in one.to_dict()


@pytest.mark.parametrize("f", [0.7, 1.0])
def test_placement_moves_inputs_and_cuts_gpu_stage_remote_bytes(train, f):
    plain = simulate(train, "crd", f, cluster=MixedCluster(2)).mixed
    placed = simulate(train, "crd", f, cluster=MixedCluster(2, placement=True)).mixed
    assert placed.placed_bytes > 0 and placed.placed_copies > 0
    assert plain.placed_bytes == 0
    assert plain.gpu_remote_bytes > 0
    assert placed.gpu_remote_bytes <= plain.gpu_remote_bytes // 10
    assert placed.gpu_local_reads > plain.gpu_local_reads
    assert placed.gpu_idle_s < plain.gpu_idle_s


def test_the_placement_budget_bounds_the_bytes_moved(train):
    free = simulate(train, "crd", 1.0, cluster=MixedCluster(2, placement=True)).mixed
    none = simulate(train, "crd", 1.0, cluster=MixedCluster(2, placement=True,
                                                          stage_budget_bytes=0))
    plain = simulate(train, "crd", 1.0, cluster=MixedCluster(2))
    assert none.mixed.placed_bytes == 0 and none.mixed.placement_skipped > 0
    assert none.to_dict() | {"placement": False, "placement_skipped": 0} == plain.to_dict()
    budget = 20 << 20
    some = simulate(train, "crd", 1.0, cluster=MixedCluster(2, placement=True,
                                                          stage_budget_bytes=budget)).mixed
    stages = sum(1 for s in train.trace.dag.stages.values() if s.gpus)
    assert 0 < some.placed_bytes <= budget * stages
    assert some.placed_bytes < free.placed_bytes


def test_room_below_counts_free_room_and_other_rdds_blocks_ranked_lower():
    idx = EvictionIndex(10, [4, 4, 4], [0, 1, 2])
    idx.insert(0, 1.0, 1)
    idx.insert(1, 5.0, 2)
    assert idx.room_below(3.0, 2) == 2 + 4
    assert idx.room_below(0.5, 2) == 2
    assert idx.room_below(6.0, 0) == 2 + 4  # never a block of the moved block's own RDD


def test_placement_never_evicts_a_block_of_higher_priority(train, monkeypatch):
    """Every block a move evicts ranks below the moved block."""
    seen = []
    place = Mixed.place

    def watched_place(self, planned, caches, where, prio, store):
        def watched(b, ex, pinned=()):
            before = {e[2]: e[0] for e in caches[ex].entry if e is not None}
            ok = store(b, ex, pinned)
            seen.extend((q, prio(b)) for v, q in before.items() if caches[ex].entry[v] is None)
            return ok
        return place(self, planned, caches, where, prio, watched)

    monkeypatch.setattr(Mixed, "place", watched_place)
    for policy in ("lru", "lrc", "crd"):
        for f in (0.4, 0.5, 0.7, 1.0):
            simulate(train, policy, f, cluster=MixedCluster(2, placement=True))
    assert seen  # moves did evict
    assert all(q < p for q, p in seen)


def test_placement_does_not_push_out_a_block_the_next_gpu_stage_needs_more():
    """The GPU executor holds X (expensive, read by the next GPU stage); the GPU stage being
    submitted reads Y (cheap to rebuild) from the CPU executor, and X and Y do not fit
    together: X outranks Y, so Y is not moved and stays a remote read."""
    a = App("xy", 0, 1)
    x = a.rdd([shuffle(a.rdd())], mb=10, cost=5.0, name="X")
    y = a.rdd([shuffle(a.rdd())], mb=10, cost=0.01, name="Y")
    a.action(x, gpus=1.0)
    a.action(y)
    a.action(a.rdd([o2o(y)], name="useY"), gpus=1.0)
    a.action(a.rdd([o2o(x)], name="useX"), gpus=1.0)
    tr = a.trace()
    sx, sy = (tr.dag.rdds[r].size(0) for r in (x, y))
    f = 1.5  # per executor: 0.75 x (X + Y)
    assert max(sx, sy) <= f * (sx + sy) / 2 < sx + sy
    r = simulate(tr, "crd", f, executors=2, cluster=MixedCluster(1, placement=True))
    assert r.mixed.placed_bytes == 0 and r.mixed.placement_skipped == 1
    assert r.mixed.gpu_misses == 0 and r.mixed.gpu_remote_bytes == sy


def test_a_mixed_cluster_needs_executors_of_both_kinds(train):
    for g in (0, 4):
        with pytest.raises(ValueError, match="gpu_executors"):
            simulate(train, "lru", 0.5, executors=4, cluster=MixedCluster(g))


# ---- without GPU stages or a cluster: today's numbers ---------------------------------------
# captured from simulate() before GPU stages existed (commit 73fa051); pagerank, cc and zip again
# when replays took up Spark's order of a task's reads and stores (lrc.compiled.spark_order)
BEFORE = {("pagerank", 0.3, "crd", "profile"): (87, 157, 2399764929, 11.298136076299192),
          ("cc", 0.3, "lrc", "online"): (208, 989, 10147354311, 40.84575152850275),
          ("zip", 0.3, "lerc", "profile"): (75, 467, 2821891884, 22.882999805363806),
          ("ml", 0.6, "crd", "online"): (149, 159, 1882256973, 10.48468469456385),
          ("svdpp", 0.3, "lru", "profile"): (594, 252, 228876331, 11.021402976199276)}


@pytest.mark.parametrize("key", list(BEFORE))
def test_without_gpu_stages_or_a_cluster_the_numbers_are_unchanged(key):
    w, f, policy, refs = key
    ct = CompiledTrace(make(w))
    r = simulate(ct, policy, f, refs=refs)
    assert (r.hits, r.evictions, r.recomputed_bytes, r.est_runtime) == BEFORE[key]
    assert r.mixed is None
    assert not any(k.startswith(("gpu", "remote", "placed")) for k in r.to_dict())
    assert simulate(ct, policy, f, refs=refs, gpu_cost_weight=0.0).to_dict() == r.to_dict()


# ---- the stage field in traces ----------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".parquet", ".json"])
def test_stage_gpus_round_trip_through_trace_files(tmp_path, suffix):
    tr, _, _ = _two_readers(gpus=0.5)
    back = load_trace(save_trace(tr, tmp_path / f"t{suffix}"))
    assert {s.id: s.gpus for s in back.dag.stages.values()} == \
        {s.id: s.gpus for s in tr.dag.stages.values()}
    assert sorted(s.gpus for s in back.dag.stages.values())[-1] == 0.5
    cpu = [d for d in back.dag.to_dict()["stages"] if "gpus" not in d]
    assert len(cpu) == len(tr.dag.stages) - 1  # a CPU stage is written as before


@pytest.mark.parametrize("bad", [-1, "one", True, None, 1e400])
def test_a_bad_gpu_amount_is_a_value_error_naming_it(tmp_path, bad):
    tr, _, _ = _two_readers(gpus=1.0)
    doc = json.loads(save_trace(tr, tmp_path / "t.json").read_text())
    doc["dag"]["stages"][-1]["gpus"] = bad
    (tmp_path / "t.json").write_text(json.dumps(doc).replace("Infinity", "1e400"))
    with pytest.raises(ValueError, match="gpus must be a finite number"):
        load_trace(tmp_path / "t.json")


def test_a_stage_without_the_field_is_a_cpu_stage():
    assert Stage(0, 0, 1).gpus == 0.0


def test_the_gpu_study_command_writes_its_report(tmp_path):
    from lrc.cli import main

    argv = ["gpu-study", "--out", str(tmp_path), "--cache-fraction", "0.7,1.0"]
    assert main(argv) == 0
    report = (tmp_path / "report.md").read_text()
    assert "python -m lrc " + " ".join(argv) in report.split("## Model")[0]
    rows = json.loads((tmp_path / "results.json").read_text())["results"]
    assert {r["variant"] for r in rows} == {"lru", "lrc", "crd-unweighted", "crd", "crd+placement"}
    assert {r["workload"] for r in rows} == {"gpu_train", "ml-gpu"}
    assert (tmp_path / "gpu.png").stat().st_size > 0
    assert main(["gpu-study", "--out", str(tmp_path), "--gpu-executors", "4"]) == 2
