"""Application DAG: RDDs with partition-level dependencies, stages and jobs, and which cached
blocks a task reads (what reference counting is built on).

Block ids are ``(rdd_id, partition)`` tuples; ``"rdd_<id>_<p>"`` strings only at the JVM boundary.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Container, Iterable, Sequence

Block = tuple[int, int]
MAX_ID = 2**31 - 1  # Spark's RDD, stage and job ids and partition numbers are Java ints
MAX_PARTITIONS = 10_000_000  # per-partition arrays are allocated: a sanity limit
MAX_BYTES = 2**62
DEP_KINDS = ("one_to_one", "range", "explicit", "shuffle", "unknown")
_BLOCK_RE = re.compile(r"rdd_(\d+)_(\d+)")


def block_name(block: Block) -> str:
    """``(3, 4) -> "rdd_3_4"`` (Spark's RDDBlockId name)."""
    return f"rdd_{block[0]}_{block[1]}"


def parse_block(name: str) -> Block | None:
    """``"rdd_3_4" -> (3, 4)``; None for non-RDD blocks (broadcast, shuffle, ...)."""
    m = _BLOCK_RE.fullmatch(name)
    return (int(m[1]), int(m[2])) if m else None


class _Everything:
    """A container holding every block: "all cached inputs already exist" (recomputation)."""

    def __contains__(self, item: object) -> bool:
        return True


ALL = _Everything()


@dataclass(frozen=True)
class Dependency:
    """How child partitions map to ``parent``'s partitions (see DESIGN.md section 2).

    ``range``: child p in [out_start, out_start+length) reads parent p - out_start + in_start.
    ``explicit``: child p reads ``mapping[p]`` (coalesce, cartesian, zip-like).
    ``shuffle``: a stage boundary, no block-level read.
    ``unknown``: listener-only data; one_to_one if partition counts match, else every partition.
    """

    parent: int
    kind: str = "one_to_one"
    in_start: int = 0
    out_start: int = 0
    length: int = 0
    mapping: tuple[tuple[int, ...], ...] | None = None

    def __post_init__(self) -> None:
        if self.kind not in DEP_KINDS:
            raise ValueError(f"dependency kind {self.kind!r} is not one of {', '.join(DEP_KINDS)}")
        if self.kind == "explicit":
            if self.mapping is None:
                raise ValueError(f"explicit dependency on RDD {self.parent} needs a mapping")
            object.__setattr__(self, "mapping", tuple(tuple(int(q) for q in m) for m in self.mapping))

    def parent_partitions(self, p: int, child_parts: int, parent_parts: int) -> Sequence[int]:
        """Parent partitions that child partition ``p`` reads through this dependency."""
        k = self.kind
        if k == "one_to_one":
            return (p,) if p < parent_parts else ()
        if k == "range":
            return (p - self.out_start + self.in_start,) if self.out_start <= p < self.out_start + self.length else ()
        if k == "explicit":
            return self.mapping[p] if p < len(self.mapping) else ()
        if k == "unknown":
            return (p,) if child_parts == parent_parts else range(parent_parts)
        return ()  # shuffle


@dataclass
class RDD:
    """An RDD. ``block_bytes``: int for every partition, a per-partition sequence, or None
    (unknown: counted as 1 byte); ``block_elements`` likewise, the values a stored partition
    holds (None: not known; ``lrc.unroll``). ``compute_cost``: seconds to compute one
    partition from its immediate inputs (its own work only). ``call_site``: where the
    application created it (Spark's short call site, e.g. ``map at pagerank.py:41``): the same
    for every generation of a dataset an iterative application re-creates, which is what
    predictions key on."""

    id: int
    num_partitions: int
    deps: tuple[Dependency, ...] = ()
    cached: bool = False
    storage_level: str = "NONE"
    block_bytes: int | Sequence[int] | None = None
    compute_cost: float = 0.0
    name: str = ""
    call_site: str = ""
    block_elements: int | Sequence[int] | None = None

    def __post_init__(self) -> None:
        if self.num_partitions < 0:
            raise ValueError(f"RDD {self.id}: negative num_partitions")
        if type(self.deps) is not tuple:
            self.deps = tuple(self.deps)
        if self.cached and self.storage_level == "NONE":
            self.storage_level = "MEMORY_ONLY"
        if self.block_bytes is None and self.block_elements is None:
            return  # (the brain's case: a job start builds thousands of RDDs)
        for k in ("block_bytes", "block_elements"):
            v = getattr(self, k)
            if isinstance(v, (list, tuple)) and len(v) != self.num_partitions:
                raise ValueError(f"RDD {self.id}: {k} has {len(v)} entries "
                                 f"for {self.num_partitions} partitions")

    def size(self, p: int) -> int:
        b = self.block_bytes
        if b is None:
            return 1
        return int(b) if isinstance(b, (int, float)) else int(b[p])

    def elements(self, p: int) -> int | None:
        """Values in partition ``p`` when stored (None: not known)."""
        n = self.block_elements
        return n if n is None or isinstance(n, int) else int(n[p])

    @property
    def serialized(self) -> bool:
        """Stored as bytes (a ``_SER`` level: PySpark's pickled batches, a DataFrame's)."""
        return "SER" in self.storage_level

    @property
    def uses_disk(self) -> bool:
        """Evicted blocks go to disk (MEMORY_AND_DISK...) instead of being dropped."""
        return "DISK" in self.storage_level


@dataclass
class Stage:
    """A stage: ``rdd_id`` is its final RDD, ``partitions`` those it computes (default all).
    ``gpus``: GPUs per task of its resource profile (0: a CPU stage); stage-level scheduling runs
    its tasks only on executors with GPUs, and a miss there leaves a GPU idle."""

    id: int
    rdd_id: int
    num_tasks: int
    parent_ids: tuple[int, ...] = ()
    job_id: int | None = None
    partitions: tuple[int, ...] | None = None
    gpus: float = 0.0
    # the shuffle its tasks write, as Spark numbers it (-1: a result stage, or not known): a
    # later job lists a map stage whose output exists under a new stage id, and skips it
    shuffle: int = -1

    def __post_init__(self) -> None:
        self.parent_ids = tuple(self.parent_ids)
        if self.partitions is not None:
            self.partitions = tuple(self.partitions)

    def task_partitions(self) -> Sequence[int]:
        return self.partitions if self.partitions is not None else range(self.num_tasks)


@dataclass
class Job:
    id: int
    stage_ids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        self.stage_ids = tuple(self.stage_ids)


@dataclass
class AppDAG:
    """RDDs, stages and jobs of one application, as far as they are known."""

    rdds: dict[int, RDD] = field(default_factory=dict)
    stages: dict[int, Stage] = field(default_factory=dict)
    jobs: dict[int, Job] = field(default_factory=dict)

    def add_rdd(self, rdd: RDD) -> None:
        """Add or update an RDD; keeps known dependencies/sizes when the new copy lacks them
        (listener data is coarser than ``describeStages`` data)."""
        old = self.rdds.get(rdd.id)
        if old is not None:
            if old.deps and all(d.kind == "unknown" for d in rdd.deps):
                rdd.deps = old.deps
            if rdd.block_bytes is None:
                rdd.block_bytes = old.block_bytes
            if rdd.block_elements is None:
                rdd.block_elements = old.block_elements
            if not rdd.compute_cost:
                rdd.compute_cost = old.compute_cost
        self.rdds[rdd.id] = rdd

    def add_stage(self, stage: Stage) -> None:
        self.stages[stage.id] = stage

    def add_job(self, job: Job) -> None:
        self.jobs[job.id] = job

    def stage(self, stage_id: int) -> Stage:
        try:
            return self.stages[stage_id]
        except KeyError:
            raise ValueError(f"unknown stage {stage_id}") from None

    def _walk(self, root: Block, materialized: Container[Block], skip_root: bool,
              limit: int | None = None, unpersisted: Container[int] = ()
              ) -> tuple[list[Block], list[Block], float]:
        """Walk narrow dependencies from ``root``: (reads, creates, summed compute cost).
        ``limit``: ValueError once the walk would visit more blocks than this."""
        reads: list[Block] = []
        creates: list[Block] = []
        cost = 0.0
        seen = set()
        stack = [root]
        while stack:
            blk = stack.pop()
            if blk in seen:
                continue
            seen.add(blk)
            rdd = self.rdds.get(blk[0])
            if rdd is None:
                continue
            if rdd.cached and not (skip_root and blk == root) and blk[0] not in unpersisted:
                if blk in materialized:
                    reads.append(blk)
                    continue
                creates.append(blk)
            cost += rdd.compute_cost
            for d in rdd.deps:
                if d.kind == "shuffle":
                    continue
                parent = self.rdds.get(d.parent)
                if parent is not None:
                    qs = d.parent_partitions(blk[1], rdd.num_partitions, parent.num_partitions)
                    if limit is not None and len(qs) + len(stack) + len(seen) > limit:
                        raise ValueError(f"block rdd_{root[0]}_{root[1]} depends on more than "
                                         f"{limit} blocks through narrow dependencies")
                    stack.extend((d.parent, q) for q in qs)
        creates.reverse()  # inputs are computed (and cached) before what is built on them
        return reads, creates, cost

    def narrow_shape(self, rdd_id: int) -> tuple[int, ...] | None:
        """The cached RDDs of ``rdd_id``'s narrow lineage when the walk from its block p visits
        block p of each RDD there, the same RDDs in the same order for every p (one-to-one
        dependencies only, every RDD with the same partition count): then a walk's result
        depends only on which of their blocks p are materialized, and one walk per such
        pattern serves every partition (`Planner._plan_stage`). None otherwise."""
        root = self.rdds.get(rdd_id)
        if root is None:
            return None
        n, cached, seen, stack = root.num_partitions, [], {rdd_id}, [root]
        while stack:
            r = stack.pop()
            if r.num_partitions != n:
                return None
            if r.cached:
                cached.append(r.id)
            for d in r.deps:
                if d.kind == "shuffle":
                    continue
                if d.kind not in ("one_to_one", "unknown"):
                    return None
                parent = self.rdds.get(d.parent)
                if parent is not None and parent.id not in seen:
                    seen.add(parent.id)
                    stack.append(parent)
        return tuple(cached)

    def task_reads(self, stage_id: int, partition: int, materialized: Container[Block],
                   limit: int | None = None, unpersisted: Container[int] = ()
                   ) -> tuple[list[Block], list[Block]]:
        """Cached blocks task (stage, partition) reads, and those it creates (computes first).
        ``limit``: at most this many blocks visited, else ValueError (hostile input).
        ``unpersisted``: ids of cached RDDs that are no longer (computed, never read or stored)."""
        reads, creates, _ = self._walk((self.stage(stage_id).rdd_id, partition), materialized,
                                       False, limit, unpersisted)
        return reads, creates

    def task_cost(self, stage_id: int, partition: int, materialized: Container[Block]) -> float:
        """Seconds of compute for the task when all its reads hit."""
        return self._walk((self.stage(stage_id).rdd_id, partition), materialized, False)[2]

    def block_inputs(self, block: Block, materialized: Container[Block] = ALL) -> list[Block]:
        """Cached blocks that a recomputation of ``block`` reads."""
        return self._walk(block, materialized, True)[0]

    def recompute_cost(self, block: Block) -> float:
        """Own seconds to recompute ``block`` when its cached inputs are available."""
        return self._walk(block, ALL, True)[2]

    def lineage_cost(self, block: Block) -> float:
        """Seconds to compute ``block`` from shuffle outputs, no cached input assumed: what the
        task that first computed it spent (the live rebuild estimate)."""
        return self._walk(block, (), True)[2]

    def lineage_rdds(self, rdd_ids: Iterable[int], narrow: bool = False) -> list[RDD]:
        """Every RDD the given ones depend on, themselves too; ``narrow``: no shuffle parent (from
        one RDD, what a rebuild of its block repeats, each once: ``MissCosts.lineage``)."""
        out, stack = {}, list(rdd_ids)
        while stack:
            r = self.rdds.get(stack.pop())
            if r is not None and r.id not in out:
                out[r.id] = r
                stack.extend(d.parent for d in r.deps if not narrow or d.kind != "shuffle")
        return list(out.values())

    # ---- JSON -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        def rdd(r: RDD) -> dict[str, Any]:
            d = asdict(r)
            d["deps"] = [{k: v for k, v in asdict(x).items() if v not in (None, 0) or k == "parent"}
                         for x in r.deps]
            for k in ("block_bytes", "block_elements"):
                v = getattr(r, k)
                if isinstance(v, (list, tuple)):
                    d[k] = [int(x) for x in v]
            if d["block_elements"] is None:  # traces without counts stay as they were
                del d["block_elements"]
            return d

        return {"rdds": [rdd(r) for r in self.rdds.values()],
                "stages": [_stage_dict(s) for s in self.stages.values()],
                "jobs": [asdict(j) for j in self.jobs.values()]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_json(cls, doc: str | dict[str, Any]) -> "AppDAG":
        """Parse and validate; malformed input raises ValueError saying what is wrong."""
        if isinstance(doc, (str, bytes)):
            try:
                doc = json.loads(doc)
            except (ValueError, RecursionError) as e:  # JSONDecodeError, bad UTF-8, nesting
                raise ValueError(f"DAG is not valid JSON: {e or 'nested too deeply'}") from None
        if not isinstance(doc, dict):
            raise ValueError("DAG JSON must be an object with 'rdds', 'stages', 'jobs'")
        dag = cls()
        for what, ctor, add in (("rdds", _rdd_from, dag.add_rdd), ("stages", Stage, dag.add_stage),
                                ("jobs", Job, dag.add_job)):
            items = doc.get(what, [])
            if not isinstance(items, list):
                raise ValueError(f"DAG JSON: '{what}' must be a list")
            for i, item in enumerate(items):
                try:
                    x = ctor(**item)
                    _CHECK[what](x)
                    add(x)
                except (TypeError, ValueError, OverflowError) as e:
                    raise ValueError(f"DAG JSON: {what}[{i}] is malformed: {e}") from None
        dag.validate()
        return dag

    def validate(self) -> None:
        """References between RDDs, stages and jobs must resolve; RDD dependencies must be
        acyclic (an RDD's parents exist before it)."""
        for r in self.rdds.values():
            for d in r.deps:
                if d.parent not in self.rdds:
                    raise ValueError(f"RDD {r.id} depends on unknown RDD {d.parent}")
        cycle = self._dep_cycle()
        if cycle:
            raise ValueError("RDD dependencies form a cycle: "
                             + " -> ".join(f"RDD {r}" for r in cycle[:20])
                             + (" ..." if len(cycle) > 20 else ""))
        for s in self.stages.values():
            if s.rdd_id not in self.rdds:
                raise ValueError(f"stage {s.id} has unknown final RDD {s.rdd_id}")
        for j in self.jobs.values():
            for s in j.stage_ids:
                if s not in self.stages:
                    raise ValueError(f"job {j.id} lists unknown stage {s}")

    def _dep_cycle(self) -> list[int] | None:
        """A cycle of RDD dependencies (child -> parent -> ... -> child), or None; iterative."""
        state: dict[int, int] = {}  # 1: on the current path, 2: done
        for root in self.rdds:
            if root in state:
                continue
            path, stack = [root], [iter(self.rdds[root].deps)]
            state[root] = 1
            while stack:
                d = next(stack[-1], None)
                if d is None:
                    state[path.pop()] = 2
                    stack.pop()
                    continue
                p = d.parent
                if p not in self.rdds or state.get(p) == 2:
                    continue
                if state.get(p) == 1:
                    return path[path.index(p):] + [p]
                state[p] = 1
                path.append(p)
                stack.append(iter(self.rdds[p].deps))
        return None


def _stage_dict(s: Stage) -> dict[str, Any]:
    """A CPU stage is written without ``gpus``, a stage of no known shuffle without ``shuffle``:
    traces without them stay as they were (and readable by versions that predate the fields)."""
    d = asdict(s)
    if not d["gpus"]:
        del d["gpus"]
    if d["shuffle"] < 0:
        del d["shuffle"]
    return d


def _rdd_from(**d: Any) -> RDD:
    deps = d.pop("deps", ())
    if not isinstance(deps, (list, tuple)):
        raise ValueError("deps must be a list")
    return RDD(deps=tuple(Dependency(**x) for x in deps), **d)


# ---- types of loaded DAGs (from_json): wrong types are errors, not surprises later --------------
def _int(v: Any, name: str, lo: int = 0, hi: int = MAX_ID) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ValueError(f"{name} must be a whole number in [{lo}, {hi}]; got {v!r}"[:200])


def _ints(vs: Any, name: str) -> None:
    for v in vs:
        _int(v, name)


def _amount(v: Any, name: str) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < float("inf"):
        raise ValueError(f"{name} must be a finite number >= 0; got {v!r}"[:200])


def _str(v: Any, name: str) -> None:
    if not isinstance(v, str):
        raise ValueError(f"{name} must be a string; got {v!r}"[:200])


def _check_rdd(r: RDD) -> None:
    _int(r.id, "id")
    _int(r.num_partitions, "num_partitions", 0, MAX_PARTITIONS)
    for d in r.deps:
        _int(d.parent, "deps.parent")
        for k in ("in_start", "out_start", "length"):
            _int(getattr(d, k), f"deps.{k}")
        for m in d.mapping or ():
            _ints(m, "deps.mapping")
    for k in ("block_bytes", "block_elements"):
        v = getattr(r, k)
        for b in v if isinstance(v, (list, tuple)) else () if v is None else (v,):
            _int(b, k, 0, MAX_BYTES)
    _amount(r.compute_cost, "compute_cost")
    if not isinstance(r.cached, bool):
        raise ValueError(f"cached must be true or false; got {r.cached!r}"[:200])
    for k in ("storage_level", "name", "call_site"):
        _str(getattr(r, k), k)


def _check_stage(s: Stage) -> None:
    _int(s.id, "id")
    _int(s.rdd_id, "rdd_id")
    _int(s.num_tasks, "num_tasks")
    _ints(s.parent_ids, "parent_ids")
    if s.job_id is not None:
        _int(s.job_id, "job_id")
    _ints(s.partitions or (), "partitions")
    _amount(s.gpus, "gpus")
    _int(s.shuffle, "shuffle", -1)


def _check_job(j: Job) -> None:
    _int(j.id, "id")
    _ints(j.stage_ids, "stage_ids")


_CHECK = {"rdds": _check_rdd, "stages": _check_stage, "jobs": _check_job}


def parents_first(stages: list[Stage]) -> list[Stage]:
    """Topological order by parent stage ids (ties by id)."""
    by_id = {s.id: s for s in stages}
    out, done = [], set()
    for root in sorted(stages, key=lambda s: s.id):  # depth-first, iterative: chains can be long
        if root.id in done:
            continue
        done.add(root.id)
        stack = [(root, iter(sorted(root.parent_ids)))]
        while stack:
            s, parents = stack[-1]
            pid = next(parents, None)
            if pid is None:
                out.append(s)
                stack.pop()
            elif pid in by_id and pid not in done:
                done.add(pid)
                stack.append((by_id[pid], iter(sorted(by_id[pid].parent_ids))))
    return out
