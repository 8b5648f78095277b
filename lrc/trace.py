"""Traces: the DAG plus the ordered events of one run (recorded live, or synthetic).

On disk (DESIGN.md section 2), ``.parquet``: one row per event with columns
``kind`` (job_start | stage_submitted | task | stage_completed | job_end | unpersist),
``job_id``, ``stage_id``, ``partition``, ``executor`` (string), ``reads`` and ``creates``
(``list<struct<rdd:int32, part:int32>>``), ``duration_s``, ``rdd_id``, ``partitions``
(``list<int32>``: those a stage_submitted attempt computes when not all of the stage's: a rerun,
a partly lost shuffle; absent in older traces) (null where unused), and the
DAG as JSON under the key-value metadata key ``lrc.dag`` (``lrc.format`` = "1").
``.json``: ``{"format": 1, "dag": {...}, "events": [{"kind": "task", "stage_id": 1, ...}]}`` with
blocks as ``[rdd, part]`` pairs; handy for small hand-written traces.

Building one in code::

    events = [Event.job_start(0), Event.stage_submitted(0),
              Event.task(0, 3, reads=[(1, 3)], creates=[(2, 3)], executor="1", duration_s=0.2),
              Event.stage_completed(0), Event.job_end(0)]
    save_trace(Trace(dag, events), "run.parquet")
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from lrc.dag import MAX_ID, AppDAG, Block

KINDS = ("job_start", "stage_submitted", "task", "stage_completed", "job_end", "unpersist")
FORMAT = "1"
_INT_FIELDS = ("job_id", "stage_id", "partition", "rdd_id")


@dataclass(slots=True)
class Event:
    """One trace event; only the fields its ``kind`` needs are set."""

    kind: str
    job_id: int | None = None
    stage_id: int | None = None
    partition: int | None = None
    executor: str | None = None
    reads: tuple[Block, ...] = ()
    creates: tuple[Block, ...] = ()
    duration_s: float | None = None
    rdd_id: int | None = None
    exec_bytes: int | None = None  # a task's peak execution memory from the pool (lrc.execmem)
    partitions: tuple[int, ...] | None = None  # a stage attempt's, when not all of the stage's

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"event kind {self.kind!r} is not one of {', '.join(KINDS)}")
        self.reads = tuple((int(r), int(p)) for r, p in self.reads)
        self.creates = tuple((int(r), int(p)) for r, p in self.creates)
        if self.partitions is not None:
            self.partitions = tuple(int(p) for p in self.partitions)
        need = {"job_start": "job_id", "job_end": "job_id", "stage_submitted": "stage_id",
                "stage_completed": "stage_id", "task": "stage_id", "unpersist": "rdd_id"}[self.kind]
        if getattr(self, need) is None or (self.kind == "task" and self.partition is None):
            raise ValueError(f"{self.kind} event needs {need}"
                             + (" and partition" if self.kind == "task" else ""))

    @classmethod
    def job_start(cls, job_id: int) -> "Event":
        return cls("job_start", job_id=job_id)

    @classmethod
    def job_end(cls, job_id: int) -> "Event":
        return cls("job_end", job_id=job_id)

    @classmethod
    def stage_submitted(cls, stage_id: int, partitions: Iterable[int] | None = None) -> "Event":
        """An attempt of the stage runs; ``partitions``: those it computes, when not all."""
        return cls("stage_submitted", stage_id=stage_id,
                   partitions=None if partitions is None else tuple(partitions))

    @classmethod
    def stage_completed(cls, stage_id: int) -> "Event":
        return cls("stage_completed", stage_id=stage_id)

    @classmethod
    def unpersist(cls, rdd_id: int) -> "Event":
        return cls("unpersist", rdd_id=rdd_id)

    @classmethod
    def task(cls, stage_id: int, partition: int, reads: Iterable[Block] = (),
             creates: Iterable[Block] = (), executor: str | None = None,
             duration_s: float | None = None, exec_bytes: int | None = None) -> "Event":
        """A finished task: cached blocks it read, blocks it computed first (creates), the
        execution memory it claimed (``exec_bytes``, None: not known)."""
        return cls("task", stage_id=stage_id, partition=partition, executor=executor,
                   reads=tuple(reads), creates=tuple(creates), duration_s=duration_s,
                   exec_bytes=exec_bytes)

    def to_dict(self) -> dict[str, Any]:
        d = {"kind": self.kind}
        for k in ("job_id", "stage_id", "partition", "executor", "duration_s", "rdd_id",
                  "exec_bytes"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        if self.kind == "task":
            d["reads"] = [list(b) for b in self.reads]
            d["creates"] = [list(b) for b in self.creates]
        if self.partitions is not None:
            d["partitions"] = list(self.partitions)
        return d


TaskEvent = Event  # DESIGN.md's name; every event kind uses the same class


@dataclass
class Trace:
    dag: AppDAG
    events: list[Event] = field(default_factory=list)
    name: str = ""
    # the Spark memory the tasks' exec_bytes were claimed in (lrc.execmem): each executor's
    # unified region in bytes (0: not known; claims are then replayed as recorded) and
    # spark.memory.storageFraction (None: not known)
    executor_memory: int = 0
    storage_fraction: float | None = None
    # spark.storage.unrollMemoryThreshold of the run (lrc.unroll; None: not known, a store then
    # replays as needing only its block's size)
    unroll_threshold: int | None = None

    def accesses(self) -> int:
        """Block accesses (reads + creates) in task events."""
        return sum(len(e.reads) + len(e.creates) for e in self.events if e.kind == "task")


# ---- save ------------------------------------------------------------------------------------
def save_trace(trace: Trace, path: str | Path) -> Path:
    """Write ``.parquet`` (default) or ``.json`` depending on the suffix."""
    path = Path(path)
    if path.suffix == ".json":
        doc = {"format": int(FORMAT), "name": trace.name, "dag": trace.dag.to_dict(),
               "events": [e.to_dict() for e in trace.events], **_memory(trace)}
        path.write_text(json.dumps(doc, separators=(",", ":")))
        return path
    import pyarrow as pa
    import pyarrow.parquet as pq

    blocks = pa.list_(pa.struct([("rdd", pa.int32()), ("part", pa.int32())]))
    schema = pa.schema([("kind", pa.string()), ("job_id", pa.int32()), ("stage_id", pa.int32()),
                        ("partition", pa.int32()), ("executor", pa.string()), ("reads", blocks),
                        ("creates", blocks), ("duration_s", pa.float64()), ("rdd_id", pa.int32()),
                        ("exec_bytes", pa.int64()), ("partitions", pa.list_(pa.int32()))])
    ev = trace.events
    cols = {k: [getattr(e, k) for e in ev] for k in
            ("kind", "job_id", "stage_id", "partition", "executor", "duration_s", "rdd_id",
             "exec_bytes")}
    cols["reads"] = [[{"rdd": r, "part": p} for r, p in e.reads] for e in ev]
    cols["creates"] = [[{"rdd": r, "part": p} for r, p in e.creates] for e in ev]
    cols["partitions"] = [None if e.partitions is None else list(e.partitions) for e in ev]
    meta = {b"lrc.dag": trace.dag.to_json().encode(), b"lrc.format": FORMAT.encode(),
            b"lrc.name": trace.name.encode(),
            **{f"lrc.{k}".encode(): json.dumps(v).encode() for k, v in _memory(trace).items()}}
    table = pa.table(cols, schema=schema.with_metadata(meta))
    pq.write_table(table, path)
    return path


def _memory(trace: Trace) -> dict[str, Any]:
    """The trace's memory fields that are known (older traces have none)."""
    out: dict[str, Any] = {}
    if trace.executor_memory > 0:
        out["executor_memory"] = trace.executor_memory
    if trace.storage_fraction is not None:
        out["storage_fraction"] = trace.storage_fraction
    if trace.unroll_threshold is not None:
        out["unroll_threshold"] = trace.unroll_threshold
    return out


def _with_memory(trace: Trace, get, where: str) -> Trace:
    """Set the memory fields from ``get(name)`` (absent: None), checked."""
    m, sf = get("executor_memory"), get("storage_fraction")
    if m is not None:
        if isinstance(m, bool) or not isinstance(m, int) or m < 0:
            raise ValueError(f"{where}: executor_memory must be a whole number >= 0; got {m!r}"[:200])
        trace.executor_memory = m
    if sf is not None:
        if isinstance(sf, bool) or not isinstance(sf, (int, float)) or not 0 <= sf < 1:
            raise ValueError(f"{where}: storage_fraction must be a number in [0, 1); got {sf!r}"[:200])
        trace.storage_fraction = float(sf)
    u = get("unroll_threshold")
    if u is not None:
        if isinstance(u, bool) or not isinstance(u, int) or u <= 0:
            raise ValueError(f"{where}: unroll_threshold must be a whole number > 0; got {u!r}"[:200])
        trace.unroll_threshold = u
    return trace


# ---- load ------------------------------------------------------------------------------------
def load_trace(path: str | Path) -> Trace:
    """Read a trace (or a Spark event log, converted by ``lrc.eventlog``); a malformed file
    raises ValueError naming the problem."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"trace file {path} does not exist")
    from lrc.eventlog import eventlog_trace, is_eventlog

    if is_eventlog(path):  # a Spark event log (file or rolling directory): lrc.eventlog
        return eventlog_trace(path)
    if path.suffix == ".json":
        return _load_json(path)
    return _load_parquet(path)


def _events(rows: Iterable[dict[str, Any]], where: str) -> list[Event]:
    out = []
    for i, row in enumerate(rows):
        try:
            if not isinstance(row, dict):
                raise ValueError("not an object")
            kw = {k: row.get(k) for k in _INT_FIELDS + ("executor", "duration_s", "exec_bytes")}
            for k in _INT_FIELDS:
                if kw[k] is not None:
                    kw[k] = _id(kw[k], k)
            if kw["executor"] is not None:
                kw["executor"] = str(kw["executor"])
            d = kw["duration_s"]
            if d is not None and (isinstance(d, bool) or not isinstance(d, (int, float))
                                  or not 0 <= d < float("inf")):
                raise ValueError(f"duration_s must be a finite number >= 0; got {d!r}"[:200])
            x = kw["exec_bytes"]
            if x is not None and (isinstance(x, bool) or not isinstance(x, int) or x < 0):
                raise ValueError(f"exec_bytes must be a whole number >= 0; got {x!r}"[:200])
            parts = row.get("partitions")
            if parts is not None:
                if not isinstance(parts, (list, tuple)):
                    raise ValueError(f"partitions must be a list; got {parts!r}"[:200])
                parts = [_id(q, "partition") for q in parts]
            out.append(Event(row.get("kind"), reads=_blocks(row.get("reads")),
                             creates=_blocks(row.get("creates")), partitions=parts, **kw))
        except (TypeError, ValueError, KeyError, OverflowError) as e:
            raise ValueError(f"{where}: event {i} is malformed: {e}") from None
    return out


def _id(v: Any, name: str) -> int:
    """A Spark id or partition number: a whole number in [0, 2**31 - 1]."""
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_ID:
        raise ValueError(f"{name} must be a whole number in [0, {MAX_ID}]; got {v!r}"[:200])
    return v


def _blocks(items) -> list[Block]:
    if items is None:
        return []
    if not isinstance(items, (list, tuple)):
        raise ValueError(f"blocks must be a list; got {items!r}"[:200])
    out = []
    for b in items:
        if isinstance(b, dict):
            out.append((_id(b["rdd"], "block rdd"), _id(b["part"], "block part")))
        elif isinstance(b, (list, tuple)) and len(b) == 2:
            out.append((_id(b[0], "block rdd"), _id(b[1], "block part")))
        else:
            raise ValueError(f"block {b!r} is not [rdd, part] or {{rdd, part}}")
    return out


def _load_json(path: Path) -> Trace:
    try:
        doc = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not valid JSON: {e}") from None
    except RecursionError:
        raise ValueError(f"{path}: not a trace: JSON nested too deeply") from None
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e}") from None
    if not isinstance(doc, dict) or "dag" not in doc or not isinstance(doc.get("events"), list):
        raise ValueError(f"{path}: expected an object with 'dag' and a list 'events'")
    if str(doc.get("format", FORMAT)) != FORMAT:
        raise ValueError(f"{path}: trace format {doc.get('format')} unsupported (want {FORMAT})")
    try:
        dag = AppDAG.from_json(doc["dag"])
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    return _with_memory(Trace(dag, _events(doc["events"], str(path)), str(doc.get("name") or "")),
                        doc.get, str(path))


def _load_parquet(path: Path) -> Trace:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as e:  # ArrowInvalid, ArrowNotImplementedError, ...
        raise ValueError(f"{path}: not a readable Parquet trace (nor a Spark event log): {e}") from None
    raw = table.schema.metadata or {}
    if b"lrc.dag" not in raw:
        raise ValueError(f"{path}: Parquet file has no 'lrc.dag' metadata: not an lrc trace")
    meta = {}
    for k in (b"lrc.dag", b"lrc.format", b"lrc.name"):
        try:
            meta[k] = raw[k].decode() if k in raw else None
        except UnicodeDecodeError as e:
            raise ValueError(f"{path}: metadata {k.decode()!r} is not UTF-8 text: {e}") from None
    if (meta[b"lrc.format"] or FORMAT) != FORMAT:
        raise ValueError(f"{path}: trace format {meta[b'lrc.format'][:20]!r} unsupported (want {FORMAT})")
    if "kind" not in table.column_names:
        raise ValueError(f"{path}: event table has no 'kind' column")
    try:
        dag = AppDAG.from_json(meta[b"lrc.dag"])
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    def get(name: str):
        v = raw.get(f"lrc.{name}".encode())
        try:
            return None if v is None else json.loads(v)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{path}: metadata 'lrc.{name}' is not JSON: {e}") from None

    return _with_memory(Trace(dag, _events(table.to_pylist(), str(path)), meta[b"lrc.name"] or ""),
                        get, str(path))
