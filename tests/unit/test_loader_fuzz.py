"""Fuzzing the loaders with malformed and hostile input (issue 14): `lrc.trace.load_trace`
(Parquet and JSON traces, Spark event logs plain or compressed), the profile loader (a trace the
brain preloads into a `Planner`, checked by `spark_plugin.profile_check`) and `lrc.eventlog`.

Contract: bad input raises ValueError (`lrc.eventlog_fields.FieldError` and
`spark_plugin.config.LrcConfigError` are ValueErrors) whose message names the problem, never
another exception (KeyError, IndexError, RecursionError, numpy/pyarrow errors) and never a hang;
a file the loader accepts can be used as a profile. test_eventlog.py fuzzes the JSON fields of
event logs; here: bytes, truncation, compression, schemas, DAG shapes (cycles, unknown ids, huge
numbers). The cases hypothesis found are kept as @example / regression tests.
"""
from __future__ import annotations

import json
import signal
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lrc.dag import RDD, AppDAG, Dependency, Job, Stage
from lrc.eventlog import read_eventlog
from lrc.planner import Planner
from lrc.trace import Event, Trace, load_trace, save_trace
from test_eventlog import (NONE, _lz4_block, _snappy_stream, app_log, job_start, mutate_one, rdd,
                           stage, write)

FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
MEM = {"Use Disk": False, "Use Memory": True, "Use Off Heap": False, "Deserialized": True,
       "Replication": 1}


@contextmanager
def no_hang(seconds: int = 10):
    """A loader that runs longer than this on a small file counts as hanging."""
    def fail(*_):
        raise AssertionError(f"loader still running after {seconds} s")
    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def load_or_value_error(path: Path) -> Trace | None:
    """load_trace's contract: a Trace usable as a profile, or ValueError with a message."""
    with no_hang():
        try:
            trace = load_trace(path)
        except ValueError as e:
            assert str(e).strip(), "ValueError without a message"
            return None
        for policy in ("lrc", "lerc", "mrd", "crd"):
            Planner(policy, profile=trace)
    return trace


def small_trace() -> Trace:
    dag = AppDAG()
    dag.add_rdd(RDD(0, 2))
    dag.add_rdd(RDD(1, 2, (Dependency(0),), cached=True, block_bytes=[10, 20]))
    dag.add_rdd(RDD(2, 2, (Dependency(1), Dependency(0, "shuffle")), cached=True, block_bytes=5))
    dag.add_rdd(RDD(3, 4, (Dependency(1, "range", 0, 0, 2), Dependency(2, "range", 0, 2, 2))))
    dag.add_rdd(RDD(4, 2, (Dependency(2, "explicit", mapping=((0, 1), (1,))),)))
    dag.add_stage(Stage(0, 2, 2, job_id=0))
    dag.add_stage(Stage(1, 3, 4, (0,), job_id=0))
    dag.add_stage(Stage(2, 4, 2, (0,), job_id=1, partitions=(0, 1), gpus=1.0))  # a GPU stage
    dag.add_job(Job(0, (0, 1)))
    dag.add_job(Job(1, (2,)))
    ev = [Event.job_start(0), Event.stage_submitted(0)]
    ev += [Event.task(0, p, creates=[(1, p), (2, p)], executor="1", duration_s=0.5) for p in range(2)]
    ev += [Event.stage_completed(0), Event.stage_submitted(1)]
    ev += [Event.task(1, p, reads=[(1 if p < 2 else 2, p % 2)], executor="2") for p in range(4)]
    ev += [Event.stage_completed(1), Event.job_end(0), Event.job_start(1), Event.stage_submitted(2)]
    ev += [Event.task(2, p, reads=[(2, 0), (2, 1)][: 2 - p]) for p in range(2)]
    ev += [Event.stage_completed(2), Event.job_end(1), Event.unpersist(1)]
    return Trace(dag, ev, "small")


# ---- any bytes, any name -----------------------------------------------------------------
_PREFIXES = [b"", b"PAR1", b"\x28\xb5\x2f\xfd", b"LZ4Block", b"\x82SNAPPY\x00",
             b'{"Event": "SparkListenerJobStart", ', b'{"format": 1, "dag": ', b"\xff\xfe"]
_SUFFIXES = ["", ".parquet", ".json", ".zstd", ".lz4", ".snappy", ".inprogress", ".lzf"]


@FUZZ
@given(prefix=st.sampled_from(_PREFIXES), body=st.binary(max_size=300),
       suffix=st.sampled_from(_SUFFIXES))
@example(prefix=b"LZ4Block", body=b"\x10" + b"\x00" * 12, suffix="")
@example(prefix=b"\x82SNAPPY\x00", body=b"\x00" * 8 + b"\x00\x00\x00\x05\xff\xff\xff\xff\xff", suffix="")
def test_random_bytes_are_a_trace_or_a_value_error(tmp_path_factory, prefix, body, suffix):
    path = tmp_path_factory.mktemp("bytes") / f"profile{suffix}"
    path.write_bytes(prefix + body)
    load_or_value_error(path)


# ---- truncation --------------------------------------------------------------------------
def _files(d: Path) -> dict[str, bytes]:
    """A valid file of every format load_trace reads."""
    t = small_trace()
    out = {"parquet": save_trace(t, d / "t.parquet").read_bytes(),
           "json": save_trace(t, d / "t.json").read_bytes()}
    raw = "".join(json.dumps(e) + "\n" for e in app_log()).encode()
    out["eventlog"] = raw
    with pa.CompressedOutputStream(str(d / "e.zstd"), "zstd") as f:
        f.write(raw)
    out["zstd"] = (d / "e.zstd").read_bytes()
    out["lz4"] = _lz4_block(raw)
    out["snappy"] = _snappy_stream(raw)
    return out


_NAMES = {"parquet": "t.parquet", "json": "t.json", "eventlog": "app-1", "zstd": "app-1.zstd",
          "lz4": "app-1.lz4", "snappy": "app-1.snappy"}


@pytest.fixture(scope="module")
def valid_files(tmp_path_factory):
    return _files(tmp_path_factory.mktemp("valid"))


def test_the_valid_files_load(tmp_path, valid_files):
    for kind, data in valid_files.items():
        (tmp_path / _NAMES[kind]).write_bytes(data)
        assert load_or_value_error(tmp_path / _NAMES[kind]) is not None, kind


@FUZZ
@given(kind=st.sampled_from(sorted(_NAMES)), frac=st.floats(0, 1), flip=st.integers(-1, 10**6),
       junk=st.binary(max_size=8))
def test_truncated_or_corrupted_files(tmp_path_factory, valid_files, kind, frac, flip, junk):
    data = bytearray(valid_files[kind][: int(len(valid_files[kind]) * frac)])
    if data and flip >= 0:
        data[flip % len(data)] ^= 0xFF
    path = tmp_path_factory.mktemp("cut") / _NAMES[kind]
    path.write_bytes(bytes(data) + junk)
    load_or_value_error(path)


# ---- JSON traces: hostile values, cycles, unknown ids --------------------------------------
_HOSTILE = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.sampled_from([-1, 2**31, 2**63, 10**12]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4),
    st.lists(st.integers(-2, 2**40), max_size=3), st.builds(lambda: [[0, 0], [1, -1]]),
    st.dictionaries(st.sampled_from(["rdd", "part", "parent", "kind", "id"]), st.integers(-1, 3),
                    max_size=2),
    st.just("explicit"), st.just("range"), st.just("shuffle"))


def _json_doc() -> dict:
    t = small_trace()
    return {"format": 1, "name": "x", "dag": t.dag.to_dict(), "events": [e.to_dict() for e in t.events]}


@FUZZ
@given(data=st.data())
def test_json_traces_with_hostile_fields(tmp_path_factory, data):
    doc = _json_doc()
    for _ in range(data.draw(st.integers(1, 4))):
        mutate_one(doc, data, _HOSTILE, grow_lists=True)
    path = tmp_path_factory.mktemp("json") / "t.json"
    path.write_text(json.dumps(doc))
    load_or_value_error(path)


def _dag_doc(deps: dict[int, list[int]], stage_parents: dict[int, list[int]]) -> dict:
    rdds = [{"id": r, "num_partitions": 2, "cached": True,
             "deps": [{"parent": p} for p in ps]} for r, ps in deps.items()]
    stages = [{"id": s, "rdd_id": s, "num_tasks": 2, "parent_ids": ps, "job_id": 0}
              for s, ps in stage_parents.items()]
    return {"rdds": rdds, "stages": stages, "jobs": [{"id": 0, "stage_ids": list(stage_parents)}]}


@FUZZ
@given(deps=st.dictionaries(st.integers(0, 5), st.lists(st.integers(0, 7), max_size=3), min_size=1),
       stage_parents=st.dictionaries(st.integers(0, 5), st.lists(st.integers(0, 7), max_size=2)),
       tasks=st.lists(st.tuples(st.integers(-1, 7), st.integers(-1, 3)), max_size=6))
@example(deps={0: [0]}, stage_parents={0: []}, tasks=[(0, 0)])  # an RDD its own parent
@example(deps={0: [1], 1: [0]}, stage_parents={0: [1], 1: [0]}, tasks=[(0, 0), (1, 1)])
def test_cycles_and_unknown_ids_in_the_dag(tmp_path_factory, deps, stage_parents, tasks):
    doc = {"format": 1, "dag": _dag_doc(deps, stage_parents),
           "events": [{"kind": "task", "stage_id": s, "partition": p, "reads": [[s, p]]}
                      for s, p in tasks]}
    path = tmp_path_factory.mktemp("dag") / "t.json"
    path.write_text(json.dumps(doc))
    trace = load_or_value_error(path)
    if trace is not None:
        for r in trace.dag.rdds.values():
            trace.dag.block_inputs((r.id, 0))
            trace.dag.lineage_rdds([r.id])


def test_a_cyclic_dag_names_the_cycle(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"format": 1, "events": [],
                                "dag": _dag_doc({0: [1], 1: [2], 2: [0]}, {0: []})}))
    with pytest.raises(ValueError, match="cycle"):
        load_trace(path)


# ---- Parquet traces: wrong schema, hostile metadata ----------------------------------------
def _table(trace: Trace, d: Path) -> pa.Table:
    return pq.read_table(save_trace(trace, d / "base.parquet"))


_COLUMN_VALUES = st.one_of(st.integers(-2**31, 2**31 - 1), st.none(), st.sampled_from([-1, 0, 2**31 - 1]))
_META = st.one_of(st.binary(max_size=20), st.just(b"\xff\xfe"), st.just(b"[]"), st.just(b'{"rdds": 5}'),
                  st.just(b"2"), st.just(b'{"rdds": [{"id": 0, "num_partitions": -5}]}'))


@FUZZ
@given(data=st.data())
def test_parquet_traces_with_wrong_schema_or_metadata(tmp_path_factory, valid_files, data):
    d = tmp_path_factory.mktemp("pq")
    (d / "t.parquet").write_bytes(valid_files["parquet"])
    table = pq.read_table(d / "t.parquet")
    meta = dict(table.schema.metadata)
    action = data.draw(st.sampled_from(["drop", "retype", "values", "meta", "drop_meta"]))
    if action == "drop":
        table = table.drop_columns([data.draw(st.sampled_from(table.column_names))])
    elif action == "retype":
        name = data.draw(st.sampled_from(table.column_names))
        i = table.column_names.index(name)
        col = data.draw(st.sampled_from(["str", "float", "int64", "list"]))
        n = table.num_rows
        arr = {"str": pa.array(["x"] * n), "float": pa.array([1.5e300] * n),
               "int64": pa.array([2**40] * n, pa.int64()),
               "list": pa.array([[1, 2]] * n, pa.list_(pa.int64()))}[col]
        table = table.set_column(i, name, arr)
    elif action == "values":
        name = data.draw(st.sampled_from(["job_id", "stage_id", "partition", "rdd_id"]))
        i = table.column_names.index(name)
        vals = [data.draw(_COLUMN_VALUES) for _ in range(table.num_rows)]
        table = table.set_column(i, name, pa.array(vals, pa.int32()))
    elif action == "meta":
        meta[data.draw(st.sampled_from([b"lrc.dag", b"lrc.format", b"lrc.name"]))] = data.draw(_META)
    else:
        meta.pop(data.draw(st.sampled_from(sorted(meta))))
    table = table.replace_schema_metadata(meta)
    pq.write_table(table, d / "t.parquet")
    load_or_value_error(d / "t.parquet")


@pytest.mark.parametrize("key, value, match", [
    (b"lrc.dag", b"\xff\xfe", "lrc.dag"),
    (b"lrc.name", b"\xff\xfe", "lrc.name"),
    (b"lrc.format", b"\xff", "format"),
])
def test_parquet_metadata_that_is_not_utf8(tmp_path, valid_files, key, value, match):
    (tmp_path / "t.parquet").write_bytes(valid_files["parquet"])
    table = pq.read_table(tmp_path / "t.parquet")
    table = table.replace_schema_metadata({**table.schema.metadata, key: value})
    pq.write_table(table, tmp_path / "t.parquet")
    with pytest.raises(ValueError, match=match):
        load_trace(tmp_path / "t.parquet")


# ---- event logs: DAG shapes the JSON-field fuzz of test_eventlog.py does not reach ---------
@FUZZ
@given(parents=st.lists(st.lists(st.integers(0, 6), max_size=3), min_size=1, max_size=5),
       stage_parents=st.lists(st.integers(-1, 6), max_size=3),
       parts=st.lists(st.sampled_from([0, 1, 3, 2**31 - 1, 10_000_000]), min_size=1, max_size=5),
       names=st.lists(st.sampled_from(["PythonRDD", "UnionRDD", "CartesianRDD"]), min_size=1, max_size=5),
       task_stage=st.integers(0, 3), task_part=st.sampled_from([0, 5, 2**31 - 1]))
@example(parents=[[1], [0]], stage_parents=[0], parts=[1], names=["PythonRDD"], task_stage=0, task_part=0)
# found: cached RDDs of 10M partitions were scanned partition by partition (derive, sizes): > 10 s
@example(parents=[[], [], []], stage_parents=[], parts=[0, 10_000_000], names=["PythonRDD"],
         task_stage=0, task_part=0)
# found: one task whose 'unknown' narrow dependency fans out to 10M parent blocks: minutes
@example(parents=[[], [], [1]], stage_parents=[], parts=[0, 10_000_000], names=["PythonRDD"],
         task_stage=1, task_part=0)
def test_eventlog_dag_cycles_unknown_ids_and_huge_counts(tmp_path_factory, parents, stage_parents,
                                                         parts, names, task_stage, task_part):
    infos = [rdd(i, ps, parts=parts[i % len(parts)], level=MEM if i % 2 else NONE,
                 name=names[i % len(names)]) for i, ps in enumerate(parents)]
    ev = [{"Event": "SparkListenerLogStart", "Spark Version": "4"},
          job_start(0, [stage(0, infos, parents=stage_parents), stage(1, infos[::-1], parents=[0])])]
    t = {"Event": "SparkListenerTaskEnd", "Stage ID": task_stage, "Task End Reason": {"Reason": "Success"},
         "Task Info": {"Partition ID": task_part, "Launch Time": 1, "Finish Time": 2, "Executor ID": "1"}}
    ev += [t, {"Event": "SparkListenerJobEnd", "Job ID": 0}]
    path = write(tmp_path_factory.mktemp("el") / "app-1", ev)
    load_or_value_error(path)


def test_a_cartesian_rdd_of_ten_million_partitions_is_not_materialized_as_a_mapping(tmp_path):
    a, b = rdd(0, parts=5000), rdd(1, parts=2000)
    c = rdd(2, [0, 1], parts=10_000_000, level=MEM, name="CartesianRDD")
    ev = [job_start(0, [stage(0, [c, a, b], tasks=1)]), {"Event": "SparkListenerJobEnd", "Job ID": 0}]
    with no_hang(20):
        el = read_eventlog(write(tmp_path / "app-1", ev))
    assert {d.kind for d in el.trace.dag.rdds[2].deps} == {"unknown"}


# ---- regression cases found by the fuzzers above --------------------------------------------
@pytest.mark.parametrize("where, value, match", [
    (("dag", "rdds", 0, "num_partitions"), 2.5, "num_partitions must be a whole number"),
    (("dag", "rdds", 0, "num_partitions"), 10**12, "num_partitions must be a whole number"),
    (("dag", "rdds", 0, "id"), "zero", "id must be a whole number"),
    (("dag", "rdds", 1, "block_bytes"), [-1, 3], "block_bytes must be a whole number"),
    (("dag", "rdds", 1, "compute_cost"), float("inf"), "compute_cost must be a finite number"),
    (("dag", "rdds", 1, "cached"), "yes", "cached must be true or false"),
    (("dag", "rdds", 4, "deps", 0, "mapping"), [[0, -1], [1]], "deps.mapping must be"),
    (("dag", "stages", 0, "id"), -1, "id must be a whole number"),
    (("dag", "stages", 2, "partitions"), [0, 2**40], "partitions must be a whole number"),
    (("dag", "stages", 2, "gpus"), -0.5, "gpus must be a finite number"),
    (("dag", "stages", 2, "gpus"), "1", "gpus must be a finite number"),
    (("dag", "jobs", 0, "stage_ids"), [0, 1.5], "stage_ids must be a whole number"),
    (("events", 2, "partition"), float("inf"), "partition must be a whole number"),
    (("events", 2, "stage_id"), 2**31, "stage_id must be a whole number"),
    (("events", 2, "duration_s"), -1, "duration_s must be a finite number"),
    (("events", 2, "reads"), "rdd_1_0", "blocks must be a list"),
    (("events", 2, "creates"), [[1, -4]], "block part must be a whole number"),
])
def test_hostile_json_trace_values_name_the_field(tmp_path, where, value, match):
    doc = _json_doc()
    target = doc
    for k in where[:-1]:
        target = target[k]
    target[where[-1]] = value
    (tmp_path / "t.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=match):
        load_trace(tmp_path / "t.json")


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000,
                                  '{"format": 1, "events": [], "dag": ' + "[" * 100_000 + "]" * 100_000 + "}"])
def test_json_nested_too_deeply_is_a_value_error(tmp_path, text):
    (tmp_path / "t.json").write_text(text)
    with pytest.raises(ValueError, match="nested too deeply"):
        load_trace(tmp_path / "t.json")


def test_an_eventlog_dag_cycle_is_named(tmp_path):
    ev = [job_start(0, [stage(0, [rdd(0, [1]), rdd(1, [2]), rdd(2, [0])])]),
          {"Event": "SparkListenerJobEnd", "Job ID": 0}]
    with pytest.raises(ValueError, match=r"implausible DAG: RDD dependencies form a cycle: RDD \d"):
        read_eventlog(write(tmp_path / "app-1", ev))


def test_a_job_of_thousands_of_chained_stages_replays(tmp_path):
    """Planner ordered a job's stages recursively: RecursionError past ~1000 chained stages."""
    from lrc.sim import simulate

    n = 3000
    stages = [stage(i, [rdd(i, [i - 1] if i else [], parts=1, level=MEM if i == 0 else NONE)],
                    parents=[i - 1] if i else [], tasks=1) for i in range(n)]
    ev = [job_start(0, stages[::-1])]
    ev += [{"Event": "SparkListenerTaskEnd", "Stage ID": i, "Task End Reason": {"Reason": "Success"},
            "Task Info": {"Partition ID": 0, "Launch Time": 1, "Finish Time": 2, "Executor ID": "1"}}
           for i in range(n)]
    ev += [{"Event": "SparkListenerJobEnd", "Job ID": 0}]
    trace = load_or_value_error(write(tmp_path / "app-1", ev))
    with no_hang(30):
        simulate(trace, "lrc", 0.5, executors=1)


# ---- the profile check of spark-lrc-submit and configure (no JVM) -----------------------------
def test_a_profile_that_cannot_load_fails_submit_and_configure(tmp_path, valid_files):
    from pyspark.sql import SparkSession

    from spark_plugin import configure
    from spark_plugin.config import LrcConfigError, LrcSettings
    from spark_plugin.profile_check import check_profile
    from spark_plugin.submit import build_command

    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"\x00garbage" * 40)
    for bad, problem in [(garbage, "not a readable Parquet trace"), (tmp_path / "nope", "does not exist"),
                         (tmp_path, "no event log in it")]:
        with pytest.raises(LrcConfigError, match=f"spark.lrc.profile: cannot load {bad}: .*{problem}"):
            build_command(["--master", "local[2]", "--lrc-conf", f"profile={bad}", "app.py"])
        with pytest.raises(LrcConfigError, match=problem):
            configure(SparkSession.builder, profile=str(bad))
    # where the driver runs elsewhere, the path is the driver's: not checked here
    check_profile(LrcSettings.from_conf({}, profile=str(garbage)), ["--deploy-mode", "cluster"])
    good = tmp_path / "t.parquet"
    good.write_bytes(valid_files["parquet"])
    check_profile(LrcSettings.from_conf({}, profile=str(good), policy="lerc"))
    check_profile(LrcSettings.from_conf({}))


def test_spark_lrc_log_records_go_to_the_driver_jvm_log_not_to_stdout(monkeypatch, capsys):
    import logging

    import pyspark

    from spark_plugin.logs import to_spark_log

    calls = []

    class Logger:
        def __getattr__(self, level):
            return lambda msg: calls.append((level, msg))

    class Jvm:
        class org:
            class slf4j:
                class LoggerFactory:
                    @staticmethod
                    def getLogger(name):
                        calls.append(("logger", name))
                        return Logger()

    monkeypatch.setattr(pyspark.SparkContext, "_jvm", Jvm, raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    to_spark_log()
    try:
        logging.getLogger("spark_lrc").warning("brain not attached: %s", "why")
        logging.getLogger("lrc.eventlog").info("sizes are estimates")
        assert calls == [("logger", "spark_lrc"), ("warn", "brain not attached: why"),
                         ("logger", "lrc.eventlog"), ("info", "sizes are estimates")]
        monkeypatch.setattr(pyspark.SparkContext, "_jvm", None, raising=False)  # no JVM: stderr
        logging.getLogger("spark_lrc").warning("no jvm")
        logging.getLogger("spark_lrc").info("dropped")
        out, err = capsys.readouterr()
        assert out == "" and "WARNING spark_lrc: no jvm" in err and "dropped" not in err
    finally:
        for name in ("spark_lrc", "lrc"):  # leave logging as it was for the other tests
            lg = logging.getLogger(name)
            lg.handlers.clear()
            lg.propagate = True
            lg.setLevel(logging.NOTSET)
