"""The wire between the JVM shim and the Python brain, both directions, defined here once.

The JVM writes events (`org.sparklrc.Events`, with Spark's Jackson) and decodes tables
(`org.sparklrc.TableCodec`); this module decodes every event into a typed record and encodes
every table. `tests/fixtures/events.jsonl`, regenerated from real Spark by
tests/spark/test_wire_fixture.py, holds one of each event and is decoded by tests/unit/test_wire.py,
so a field renamed on either side fails a test.

Events: one JSON object per line, field `e` the type; every other field is required (decoding is
strict both ways: a missing, unexpected or mistyped field is a `WireError` naming it), except
`deps`, which is absent when the lineage walk did not reach the RDD, and the optional fields
said so below.

    job_start        job, time (ms, the scheduler's job start), received (ms, Spark's listener
                     bus delivered it to the listener), sent (ms, the listener wrote the
                     line), stage_ids (every stage of the job, in Spark's order),
                     stages: [stage] (only those no earlier job_start described at this
                     attempt: the listener remembers the last 1,024, `Described.java`; the
                     brain resolves stages and RDDs named by id, `events.StageMemory`)
      stage          stage, attempt, rdd (final RDD), tasks, parents (stage ids),
                     shuffle (shuffle id it writes, -1 for a result stage), rdd_ids (all its
                     RDDs), rdds: [rdd] (only those no earlier job_start described with the
                     same fields: the listener remembers 1,024; `describeStages` describes all),
                     gpus (GPUs per task of its resource profile; absent: 0, a CPU stage),
                     parts (the partitions a result stage computes when not 0..tasks-1: a
                     take's later scans; absent: the first `tasks`)
      rdd            id, name, callsite (where the application created it), parts,
                     level ("MEMORY_ONLY", ..., "NONE"), cached, parents,
                     deps: [dep] (optional)
      dep            parent, kind (one_to_one | range | explicit | shuffle | unknown),
                     in_start, out_start, length (range), map ([[parent partitions] per child
                     partition], explicit; else []); decoded as `lrc.dag.Dependency`, whose
                     `mapping` it is
    stage_submitted  stage, attempt, tasks, time, parts (the partitions this attempt computes;
                     absent: all of the stage's - a rerun after a fetch failure or a lost
                     executor computes only what is missing, `Lineage.partitionsToRun`)
    stage_completed  stage, attempt, failed, time
    task_end         stage, attempt, partition, executor, task, success, duration_ms,
                     exec_mem (bytes: the task's peak on-heap execution memory, lrc.execmem),
                     resubmitted (true, success false: no run, Spark runs this finished map
                     task again, its output lost with its executor; absent: false)
    task_cache       executor, stage, partition, task, hits, puts, evicted (block names),
                     put_elements (per entry of puts, the values the stored block holds;
                     -1: not known - a serialized level with spark.lrc.countValues off),
                     evictions: [{block, order
                     ("priority" | "lru"), priority (null if infinite), for (block stored
                     next, or null)}], table_version, hooks_cpu_ns and watch_cpu_ns (the
                     executor's plugin CPU so far in its task hooks and its table watch thread,
                     org.sparklrc.PluginCpu)
    block            executor, block, level, mem, disk (bytes), time
    unpersist        rdd
    job_end          job, time, success
    executor_added   executor, host, cores, resources ({"gpu": ["0", "1"]})
    executor_removed executor
    block_manager    executor, mem (bytes: its unified memory, storage + execution; "driver" is
                     the executor in local mode)
    executor_plugin  executor, installed, error ("" when installed)
    table_in_force   executor, version, stage, waited_ms
    table_applied    executor, version, lag_ms (driver's publish -> applied on the executor,
                     wall clocks: meaningful where they agree, e.g. one host)
    app_end          time

`task_cache`, `executor_plugin` and `table_in_force` come from executors (PluginContext.send);
`table_applied` from the driver's TableEndpoint (the executor's next table request carries it;
buffered lazily: it never wakes the brain, it goes with its next drain);
the others from the driver's listener.

Tables (`LrcBridge.publish(version, rdd_arrays, planned_stages)`, decoded by TableCodec):
`rdd_arrays` is `;`-separated items: `rddId=p0,p1,...`, one priority per partition in partition
order (`Infinity`, `-Infinity` for infinite ones), replaces the RDD's array; an empty array `rddId=`
removes the RDD from the table; `rddId@part:p,part:p,...` changes only those partitions of the
RDD's array (absent partitions of an RDD not in the table read 0). Only changed RDDs need to be
sent. `planned_stages` is the comma-separated ids of the
stages newly covered by this version.

GPU placement moves (`LrcBridge.publish(version, rdd_arrays, planned_stages, moves)`, decoded by
jvm_shim's Placement; sent whole, only when they change): `;`-separated items
`rddId,part,targetExecutor,bytes,done` (done 0/1: the copy is on the target; the other holders'
copies then go first on eviction there); an empty string withdraws every move.

Metrics (`LrcBridge.reportMetrics(lines)`, applied by BrainMetrics): `name=value` lines, integer
values, names `brain.<count>` and `brain.executor.<id>.<count>` (hits, misses, effectiveHits,
evictions, tasks).
"""
from __future__ import annotations

import functools
import json
import math
import sys
import types
import typing
from dataclasses import MISSING, field, fields, is_dataclass, make_dataclass
from typing import Any, Iterable, Mapping, Sequence

from lrc.dag import Dependency


class WireError(ValueError):
    """An event line does not match the wire format; the message names the field."""


# ---- records ---------------------------------------------------------------------------------

EVENT_TYPES: dict[str, type] = {}  # wire name -> record class


def _record(cls_name: str, /, **spec: Any) -> type:
    """A frozen dataclass with slots (the brain remembers thousands of stage and RDD records,
    `events.StageMemory`: slots take a fifth off each); each field is a type, or (type,
    dataclasses.field(...))."""
    return make_dataclass(cls_name, [(k, *v) if isinstance(v, tuple) else (k, v)
                                 for k, v in spec.items()], frozen=True, slots=True)


def _event(wire_name: str, cls_name: str, /, **spec: Any) -> type:
    cls = EVENT_TYPES[wire_name] = _record(cls_name, **spec)
    return cls


Ints = tuple[int, ...]
Strs = tuple[str, ...]

# A dependency decodes straight into the planner's type, built once (a 1,000-stage job start
# holds thousands; building each as a record and again as a Dependency cost a tenth of its
# planning). Every field is required on the wire, as for the records; `mapping` travels as `map`,
# a list (empty but for an explicit dependency), never null.
_FOREIGN: dict[type, dict[str, tuple[str, Any]]] = {  # class -> attribute -> (wire name, type)
    Dependency: {"mapping": ("map", tuple[Ints, ...])}}
RddInfo = _record("RddInfo", id=int, name=str, callsite=str, parts=int, level=str, cached=bool,
                  parents=Ints,
                  deps=(tuple[Dependency, ...] | None, field(default=None)))
StageInfo = _record("StageInfo", stage=int, attempt=int, rdd=int, tasks=int, parents=Ints,
                    shuffle=int, rdd_ids=Ints, rdds=tuple[RddInfo, ...],
                    gpus=(float, field(default=0.0)), parts=(Ints | None, field(default=None)))
Eviction = _record("Eviction", block=str, order=str, priority=float | None,
                   for_block=(str | None, field(metadata={"wire": "for"})))

JobStart = _event("job_start", "JobStart", job=int, time=int, received=int, sent=int,
                  stage_ids=Ints, stages=tuple[StageInfo, ...])
StageSubmitted = _event("stage_submitted", "StageSubmitted", stage=int, attempt=int, tasks=int,
                        time=int, parts=(Ints | None, field(default=None)))
StageCompleted = _event("stage_completed", "StageCompleted", stage=int, attempt=int, failed=bool,
                        time=int)
TaskEnd = _event("task_end", "TaskEnd", stage=int, attempt=int, partition=int, executor=str,
                 task=int, success=bool, duration_ms=int, exec_mem=int,
                 resubmitted=(bool, field(default=False)))
TaskCache = _event("task_cache", "TaskCache", executor=str, stage=int, partition=int, task=int,
                   hits=Strs, puts=Strs, put_elements=Ints, evicted=Strs,
                   evictions=tuple[Eviction, ...],
                   table_version=int, hooks_cpu_ns=int, watch_cpu_ns=int)
BlockUpdate = _event("block", "BlockUpdate", executor=str, block=str, level=str, mem=int, disk=int,
                     time=int)
Unpersist = _event("unpersist", "Unpersist", rdd=int)
JobEnd = _event("job_end", "JobEnd", job=int, time=int, success=bool)
ExecutorAdded = _event("executor_added", "ExecutorAdded", executor=str, host=str, cores=int,
                       resources=dict[str, Strs])
ExecutorRemoved = _event("executor_removed", "ExecutorRemoved", executor=str)
BlockManagerAdded = _event("block_manager", "BlockManagerAdded", executor=str, mem=int)
ExecutorPlugin = _event("executor_plugin", "ExecutorPlugin", executor=str, installed=bool,
                        error=str)
TableInForce = _event("table_in_force", "TableInForce", executor=str, version=int, stage=int,
                      waited_ms=int)
TableApplied = _event("table_applied", "TableApplied", executor=str, version=int, lag_ms=float)
AppEnd = _event("app_end", "AppEnd", time=int)


# ---- decoding --------------------------------------------------------------------------------

def decode_event(line: str) -> Any:
    """One event line -> its record. Raises WireError naming what does not match."""
    try:
        obj = json.loads(line)
    except ValueError as e:
        raise WireError(f"not JSON ({e}): {line[:120]!r}") from None
    if not isinstance(obj, dict):
        raise WireError(f"an event must be a JSON object: {line[:120]!r}")
    kind = obj.pop("e", None)
    cls = EVENT_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise WireError(f"unknown event type {kind!r}; known: {', '.join(EVENT_TYPES)}")
    return _decode(cls, obj, kind)


def decode_stages(text: str) -> tuple[Any, ...]:
    """`LrcBridge.describeStages`' answer, `{"stages": [stage, ...]}`, -> StageInfo records."""
    try:
        obj = json.loads(text)
    except ValueError as e:
        raise WireError(f"describeStages: not JSON ({e}): {text[:120]!r}") from None
    if not isinstance(obj, dict) or set(obj) != {"stages"}:
        raise WireError(f"describeStages: expected {{\"stages\": [...]}}: {text[:120]!r}")
    return _value(tuple[StageInfo, ...], obj["stages"], "describeStages.stages")


@functools.cache
def wire_fields(cls: type) -> dict[str, tuple[str, Any, bool]]:
    """Wire name -> (attribute, type, required) of a record class."""
    hints = typing.get_type_hints(cls)
    foreign = _FOREIGN.get(cls)
    if foreign is not None:
        named = {f.name: foreign.get(f.name, (f.name, hints[f.name])) for f in fields(cls)}
        return {name: (attr, tp, True) for attr, (name, tp) in named.items()}
    return {f.metadata.get("wire", f.name): (f.name, hints[f.name], f.default is MISSING)
            for f in fields(cls)}


Where = Any  # a path in an event: its name, or (parent path, field name or index), joined lazily


def _path(where: Where) -> str:
    """`job_start.stages[0].rdds[1]` from the nested pairs (built only for an error message:
    per field it cost a third of a job start's decoding)."""
    if isinstance(where, str):
        return where
    parent, key = where
    return f"{_path(parent)}[{key}]" if isinstance(key, int) else f"{_path(parent)}.{key}"


def _decode(cls: type, obj: Any, where: Where) -> Any:
    if not isinstance(obj, dict):
        raise WireError(f"{_path(where)}: expected an object, got {obj!r}")
    spec = wire_fields(cls)
    intern = cls in _INTERNED
    values = {}
    for name, (attr, tp, required) in spec.items():
        if name in obj:
            v = obj[name]
            if type(v) is tp and tp in _PLAIN:  # the common case, checked without a path string
                values[attr] = sys.intern(v) if intern and tp is str else v
            else:
                values[attr] = _value(tp, v, (where, name))
        elif required:
            raise WireError(f"{_path(where)}: field {name!r} is missing")
    if not obj.keys() <= spec.keys():
        extra = set(obj) - set(spec)
        raise WireError(f"{_path(where)}: unexpected field(s) {', '.join(sorted(extra))}")
    try:
        return cls(**values)
    except ValueError as e:  # a value its type refuses (a Dependency's unknown kind)
        raise WireError(f"{_path(where)}: {e}") from None


_PLAIN = (int, str, bool, float)  # exact type match: a bool is not an int here
# Records whose strings are interned: the brain remembers thousands of RDD descriptions, whose
# names, call sites, levels and dependency kinds recur in every job. Not block names: each is
# new, and interning them only churns the interpreter's table of interned strings.
_INTERNED = (RddInfo, Dependency)


@functools.cache
def _shape(tp: Any) -> tuple[Any, tuple, bool]:
    """(origin, args, is a record) of a field type: computed once per type, not per event."""
    return typing.get_origin(tp), typing.get_args(tp), is_dataclass(tp)


def _value(tp: Any, v: Any, where: Where) -> Any:
    origin, args, record = _shape(tp)
    if origin in (types.UnionType, typing.Union):  # X | None
        return None if v is None else _value(next(a for a in args if a is not type(None)), v, where)
    if origin is tuple:
        _expect(v, list, where)
        item = args[0]
        if item in _PLAIN and all(type(x) is item for x in v):
            return tuple(v)
        return tuple(_value(item, x, (where, i)) for i, x in enumerate(v))
    if origin is dict:
        _expect(v, dict, where)
        return {k: _value(args[1], x, (where, k)) for k, x in v.items()}
    if record:
        return _decode(tp, v, where)
    if tp is float:
        _expect(v, (int, float), where)
        return float(v)
    _expect(v, tp, where)
    return v


def _expect(v: Any, tp: type | tuple[type, ...], where: Where) -> None:
    if not isinstance(v, tp) or (isinstance(v, bool) and tp is not bool):
        raise WireError(f"{_path(where)}: expected {getattr(tp, '__name__', tp)}, got {v!r}")


# ---- tables ----------------------------------------------------------------------------------

def _priority(x: float) -> str:
    """A priority as Java's Double.parseDouble reads it back exactly, short."""
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def encode_arrays(arrays: Mapping[int, Sequence[float]]) -> str:
    """`{rdd: priorities per partition}` -> `rdd=p0,p1;...` (an empty sequence removes the RDD)."""
    return ";".join(f"{rdd}=" + ",".join(_priority(p) for p in ps) for rdd, ps in arrays.items())


def encode_updates(updates: Mapping[int, Mapping[int, float]]) -> str:
    """`{rdd: {partition: priority}}` -> `rdd@part:p,...;...`: only these partitions change."""
    return ";".join(f"{rdd}@" + ",".join(f"{part}:{_priority(p)}" for part, p in sorted(ps.items()))
                    for rdd, ps in updates.items())


def encode_moves(moves: Iterable[tuple[tuple[int, int], str, int, bool]]) -> str:
    """`[((rdd, part), target executor, bytes, done)]` -> `rdd,part,target,bytes,done;...`."""
    out = []
    for (rdd, part), target, nbytes, done in moves:
        if any(c in str(target) for c in ",;|"):
            raise ValueError(f"executor id {target!r} cannot be sent in a move")
        out.append(f"{int(rdd)},{int(part)},{target},{int(nbytes)},{int(bool(done))}")
    return ";".join(out)


def encode_stages(stages: Iterable[int]) -> str:
    return ",".join(map(str, sorted(stages)))


_METRIC_COUNTS = {"hits": "hits", "misses": "misses", "effectiveHits": "effective_hits",
                  "evictions": "evictions", "tasks": "tasks"}


def encode_metrics(stats: Mapping[str, Any]) -> str:
    """The brain's counts (from `Brain.stats()`) for the driver's metrics system."""
    rows = [f"brain.{name}={int(stats.get(key) or 0)}" for name, key in _METRIC_COUNTS.items()]
    for ex, counts in (stats.get("executors") or {}).items():
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in str(ex))
        rows += [f"brain.executor.{safe}.{name}={int(counts.get(key) or 0)}"
                 for name, key in _METRIC_COUNTS.items()]
    return "\n".join(rows)
