"""Block sizes and value counts of cached RDDs from a Spark event log's task Input Metrics, for
what the log does not measure: sizes without block updates, value counts always (the unroll
reservation, `lrc.unroll`, steps by them; only spark-lrc's recorder counts them live).

Spark adds a block a task reads from the cache to the task's Input Metrics
(`RDD.getOrCompute`): its size to "Bytes Read" and one "Records Read" per value the task
iterates. So a task that read one cached block tells that block's size and values exactly, and
one that read several their sums. A block the task computed itself, or missed, adds nothing; a
block read twice in one task adds twice; other inputs (files) add theirs. Each block takes the
value its samples give most often (the smallest among equals): a block read once and found is
the common case, and the others scatter."""
from __future__ import annotations

from collections import Counter, defaultdict
from statistics import median
from typing import Callable, Iterable, Mapping, Sequence

from lrc.dag import RDD, AppDAG, Block
from lrc.derive import by_rdd, fill_blocks
from lrc.predict import dataset_name
from lrc.trace import Event, Trace

MAX_ROUNDS = 64  # peeling rounds: each resolves what the last one made known


def block_values(tasks: Sequence[Event], per_task: Sequence[int], dag: AppDAG,
                 weight: Callable[[Block], float] | None = None, hits: bool = False
                 ) -> tuple[dict[Block, int], dict[int, str]]:
    """Per-block values that ``per_task`` (one per task event, in order) implies: a task whose
    reads have one block not known gives that block its value less the known ones' (peeling,
    repeated as more become known); when that is stuck, a cached RDD that tasks read but none of
    whose blocks they tell apart inherits the values of the nearest RDD of the same dataset
    (``lrc.predict.dataset_name``) with as many partitions: an earlier or later generation
    (PageRank's ``ranks`` are read with ``links`` in every iteration but the last). What is left
    gets the tasks' unexplained rest shared over the blocks they read that are not known, in
    proportion to ``weight`` (default: evenly), the median of its shares. Returns the values
    and, per RDD, how the least sure of its blocks got its value: ``input_metrics`` (tasks told
    it), ``inherited`` or ``shared``. ``hits``: every sample is of blocks found (no miss to
    tell)."""
    if len(tasks) != len(per_task):
        return {}, {}
    samples = [(e.reads, v) for e, v in zip(tasks, per_task) if e.reads and v > 0]
    known: dict[Block, int] = {}
    found: dict[Block, int] = {}
    read = {r for reads, _ in samples for r, _ in reads}
    inherited: set[int] = set()
    rdds = dag.rdds
    below: dict[Block, list[Block]] = {}

    def inputs(b: Block) -> list[Block]:
        if hits:
            return []
        if b not in below:
            below[b] = dag.block_inputs(b)
        return below[b]

    for _ in range(MAX_ROUNDS):
        if not (_peel(samples, known, found, inputs, True)
                or _peel(samples, known, found, inputs, False)
                or _inherit(rdds, read, known, found, inherited)):
            break
    shares: dict[Block, list[float]] = defaultdict(list)
    for reads, v in samples:
        todo = [b for b in reads if b not in known]
        rest = v - sum(known[b] for b in reads if b in known)
        w = [weight(b) if weight else 1.0 for b in todo]
        if len(todo) == 1 and _a_miss(todo[0], rest, known, inputs):
            continue
        if todo and rest > 0 and sum(w) > 0:
            for b, x in zip(todo, w):
                shares[b].append(rest * x / sum(w))
    how = {r: "inherited" if r in inherited else "input_metrics" for r, _ in found}
    for b, vals in shares.items():
        found[b] = max(1, round(median(vals)))
        how[b[0]] = "shared"
    return found, how


def _peel(samples: list[tuple[tuple[Block, ...], int]], known: dict[Block, int],
          found: dict[Block, int], inputs: Callable[[Block], Sequence[Block]],
          strict: bool) -> bool:
    """One round of peeling. A sample that the block's cached inputs explain exactly is a miss
    (the task rebuilt the block from them) and tells nothing; ``strict``: only blocks whose
    inputs are all known, so that the misses can be told (a stage re-reading an evicted cached
    table reads the blocks below it, as many times as it finds the table)."""
    candidates: dict[Block, Counter] = defaultdict(Counter)
    for reads, v in samples:
        todo = None
        rest = v
        for b in reads:
            if b in known:
                rest -= known[b]
            elif todo is None:
                todo = b
            else:
                break
        else:
            if todo is None or rest <= 0:
                continue
            miss = _a_miss(todo, rest, known, inputs)
            if miss or (miss is None and strict):
                continue
            candidates[todo][rest] += 1
    for b, c in candidates.items():
        known[b] = found[b] = min(c.items(), key=lambda x: (-x[1], x[0]))[0]
    return bool(candidates)


def _a_miss(b: Block, v: int, known: Mapping[Block, int],
            inputs: Callable[[Block], Sequence[Block]]) -> bool | None:
    """Whether ``v`` is what a task that rebuilt ``b`` from its cached inputs read (None: they
    are not all known)."""
    below = inputs(b)
    if not all(i in known for i in below):
        return None
    return bool(below) and v == sum(known[i] for i in below)


def _inherit(rdds: Mapping[int, RDD], read: set[int], known: dict[Block, int],
             found: dict[Block, int], inherited: set[int]) -> bool:
    per_rdd = by_rdd(known)
    def dataset(r: RDD) -> tuple[str, int]:
        return dataset_name(r.call_site, r.name), r.num_partitions

    datasets: dict[tuple[str, int], list[int]] = defaultdict(list)
    for rid in sorted(per_rdd):
        if (r := rdds.get(rid)) is not None:
            datasets[dataset(r)].append(rid)
    changed = False
    for rid in sorted(read - set(per_rdd)):
        r = rdds.get(rid)
        if r is not None and (donors := datasets.get(dataset(r))):
            donor = min(donors, key=lambda d: (abs(d - rid), d))
            for p, v in per_rdd[donor].items():
                known[(rid, p)] = found[(rid, p)] = v
            inherited.add(rid)
            changed = True
    return changed


def read_once_records(tasks: Sequence[Event], task_bytes: Sequence[int],
                      task_records: Sequence[int], rdds: Mapping[int, RDD]) -> list[int]:
    """Each task's Records Read where its Bytes Read is exactly the sizes of the blocks it read
    (so it found each in the cache and read it once, and read nothing else), else 0."""
    out = []
    for e, n, k in zip(tasks, task_bytes, task_records):
        ok = e.reads and k > 0 and all(rdds[r].block_bytes is not None for r, _ in e.reads)
        out.append(k if ok and n == sum(rdds[r].size(p) for r, p in e.reads) else 0)
    return out


def estimate_blocks(trace: Trace, ever_cached: Iterable[int], sizes: Mapping[Block, int],
                    info_sizes: Mapping[int, tuple[int, int]], task_bytes: Sequence[int],
                    task_records: Sequence[int]) -> tuple[dict[int, str], dict[int, str]]:
    """Sets the block sizes ``sizes`` (the log's block updates) did not measure, and the value
    counts, of ``trace``'s cached RDDs: see ``lrc.eventlog``. ``info_sizes``: rdd -> (bytes,
    cached partitions) from the RDD Info of completed stages. Returns where each RDD's sizes and
    counts came from."""
    rdds = trace.dag.rdds
    tasks = [e for e in trace.events if e.kind == "task"]
    measured = {rid for rid, p in sizes if rid in rdds and p < rdds[rid].num_partitions}
    # with block updates logged, a cached RDD that has none was never stored (GraphX's
    # VertexRDDImpl reports its partitions' level and stores nothing itself), as recorded live
    stored = measured if sizes else set(ever_cached)
    per_block, how = ({}, {}) if sizes else block_values(tasks, task_bytes, trace.dag)
    per_rdd = by_rdd(per_block)
    size_source: dict[int, str] = {}
    for rid in ever_cached:
        r = rdds.get(rid)
        if r is None:
            continue
        if rid in measured:
            src = "measured"
        elif rid not in stored:
            src = "never_stored"
        elif rid in info_sizes:
            total, n = info_sizes[rid]
            r.block_bytes = max(1, total // n)
            src = "rdd_info"
        elif fill_blocks(r, "block_bytes", per_rdd.get(rid, {})):
            src = how[rid]
        else:
            src = "unknown"
        size_source[rid] = src
    records = read_once_records(tasks, task_bytes, task_records, rdds)
    counts, how = block_values(tasks, records, trace.dag, hits=True,
                               weight=lambda b: rdds[b[0]].size(b[1]))
    count_source: dict[int, str] = {}
    for rid, by_part in by_rdd(counts).items():
        if rid in stored and rid in rdds and fill_blocks(rdds[rid], "block_elements", by_part):
            count_source[rid] = how[rid]
    return size_source, count_source
