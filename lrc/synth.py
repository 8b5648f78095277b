"""Synthetic workloads shaped like the LRC/LERC papers' benchmarks, as Traces.

Each builds an application DAG (iterative apps cache a new RDD per iteration and, like many real
programs, never unpersist the old one, so dead blocks pile up; a base RDD is reused throughout;
block sizes vary per partition) and "runs" it job by job the way Spark would: stages of a job in
parents-first order, shuffle-map stages already computed are skipped, every task records the
cached blocks it reads and creates. Deterministic for a given seed.
"""
from __future__ import annotations

import math

import numpy as np

from lrc.dag import AppDAG, Dependency, Job, RDD, Stage, parents_first
from lrc.trace import Event, Trace

MB = 1 << 20


def o2o(parent: int) -> Dependency:
    return Dependency(parent, "one_to_one")


def shuffle(parent: int) -> Dependency:
    return Dependency(parent, "shuffle")


class App:
    """Builds a DAG and its run. ``rdd`` declares RDDs, ``action`` submits a job computing an RDD
    (a result stage plus the shuffle-map stages below it), ``unpersist`` drops an RDD."""

    def __init__(self, name: str, seed: int, parts: int) -> None:
        self.name, self.parts = name, parts
        self.rng = np.random.default_rng(seed)
        self.dag = AppDAG()
        self.map_stage: dict[int, int] = {}  # shuffle parent RDD -> its (reused) map stage
        self.steps: list[tuple[str, int]] = []

    def rdd(self, deps=(), mb: float | None = None, cost: float = 0.05, parts: int | None = None,
            level: str = "MEMORY_ONLY", name: str = "", site: str | None = None) -> int:
        """An RDD; cached iff ``mb`` (mean block size) is given; sizes vary lognormally. Its
        call site is ``site``, by default its name without a trailing iteration number (every
        iteration of a loop creates its RDDs at the same place in the code)."""
        n = parts or self.parts
        sizes = None
        if mb is not None:
            sizes = [max(1, int(x)) for x in self.rng.lognormal(math.log(mb * MB), 0.35, n)]
        rid = len(self.dag.rdds)
        self.dag.add_rdd(RDD(rid, n, tuple(deps), cached=mb is not None,
                             storage_level=level if mb is not None else "NONE", block_bytes=sizes,
                             compute_cost=cost * float(self.rng.uniform(0.8, 1.2)), name=name,
                             call_site=name.rstrip("0123456789_") if site is None else site))
        return rid

    def source(self, name: str, mb: float, cost: float, read_cost: float = 0.1) -> int:
        """A cached RDD built by a shuffle of uncached input data: how these apps get their data."""
        return self.rdd([shuffle(self.rdd(cost=read_cost))], mb=mb, cost=cost, name=name)

    def sources(self, *names: str, mb: float, cost: float, read_cost: float = 0.1) -> list[int]:
        """Sources of one size and cost, built in order, then each materialised by its own job."""
        ids = [self.source(n, mb, cost, read_cost) for n in names]
        for rid in ids:
            self.action(rid)
        return ids

    def _stage(self, rdd_id: int) -> int:
        parents, stack, seen = [], [rdd_id], set()
        while stack:  # shuffle dependencies of the stage's narrow lineage
            r = self.dag.rdds[stack.pop()]
            if r.id in seen:
                continue
            seen.add(r.id)
            for d in r.deps:
                if d.kind == "shuffle":
                    if d.parent not in self.map_stage:
                        self.map_stage[d.parent] = self._stage(d.parent)
                    parents.append(self.map_stage[d.parent])
                else:
                    stack.append(d.parent)
        sid = len(self.dag.stages)
        n = self.dag.rdds[rdd_id].num_partitions
        self.dag.add_stage(Stage(sid, rdd_id, n, tuple(sorted(set(parents)))))
        return sid

    def action(self, rdd_id: int, gpus: float = 0.0) -> int:
        """A job computing ``rdd_id``; ``gpus``: its result stage's GPUs per task (a resource
        profile binding it to GPU executors)."""
        final = self._stage(rdd_id)
        self.dag.stages[final].gpus = gpus
        ids, stack = set(), [final]
        while stack:
            s = stack.pop()
            if s not in ids:
                ids.add(s)
                stack.extend(self.dag.stages[s].parent_ids)
        jid = len(self.dag.jobs)
        for s in ids:
            if self.dag.stages[s].job_id is None:
                self.dag.stages[s].job_id = jid
        self.dag.add_job(Job(jid, tuple(sorted(ids))))
        self.steps.append(("job", jid))
        return jid

    def unpersist(self, rdd_id: int) -> None:
        self.steps.append(("unpersist", rdd_id))

    def trace(self) -> Trace:
        """Run the jobs in order and record what each task reads and creates."""
        dag, events, done, mat, gone = self.dag, [], set(), set(), set()
        for kind, x in self.steps:
            if kind == "unpersist":
                events.append(Event.unpersist(x))
                mat = {b for b in mat if b[0] != x}
                gone.add(x)  # Spark computes its blocks from now on without storing them
                continue
            events.append(Event.job_start(x))
            for st in parents_first([dag.stages[s] for s in dag.jobs[x].stage_ids]):
                if st.id in done:
                    continue  # skipped: shuffle output exists
                events.append(Event.stage_submitted(st.id))
                for p in st.task_partitions():
                    reads, creates = dag.task_reads(st.id, p, mat, unpersisted=gone)
                    cost = dag.task_cost(st.id, p, mat)
                    mat.update(creates)
                    events.append(Event.task(st.id, p, reads, creates, duration_s=round(cost, 6)))
                events.append(Event.stage_completed(st.id))
                done.add(st.id)
            events.append(Event.job_end(x))
        return Trace(dag, events, self.name)


def pagerank(seed: int = 0, parts: int = 16, iters: int = 4) -> Trace:
    """links (big, reused every iteration, read twice per iteration) and one new ranks RDD per
    iteration (the previous one is dead but kept)."""
    a = App("pagerank", seed, parts)
    links = a.source("links", mb=24, cost=0.6)
    ranks = a.rdd([o2o(links)], mb=8, cost=0.02, name="ranks0", site="ranks init")
    a.action(ranks)
    for i in range(iters):
        contribs = a.rdd([o2o(links), o2o(ranks)], cost=0.2, name=f"contribs{i}")
        ranks = a.rdd([shuffle(contribs), o2o(links)], mb=8, cost=0.1, name=f"ranks{i + 1}")
        a.action(ranks)
    return a.trace()


def cc(seed: int = 0, parts: int = 16, iters: int = 8) -> Trace:
    """ConnectedComponents in Pregel style: cached graph edges, per-iteration cached messages
    (shrinking as vertices converge, counted once, then unpersisted) and vertices (kept)."""
    a = App("cc", seed, parts)
    edges = a.source("edges", mb=30, cost=0.5)
    verts = a.rdd([o2o(edges)], mb=3, cost=0.05, name="verts0", site="verts init")
    a.action(verts)
    prev_msgs = None
    for i in range(iters):
        msgs = a.rdd([o2o(edges), o2o(verts)], mb=max(0.5, 4 * 0.75 ** i), cost=0.3, name=f"msgs{i}")
        verts = a.rdd([o2o(verts), shuffle(msgs)], mb=2, cost=0.05, name=f"verts{i + 1}")
        a.action(verts)
        a.action(a.rdd([o2o(msgs)], cost=0.01, name=f"count{i}"))
        if prev_msgs is not None:
            a.unpersist(prev_msgs)
        prev_msgs = msgs
    return a.trace()


def ml(seed: int = 0, parts: int = 16, iters: int = 12) -> Trace:
    """Iterative KMeans/LR: input cached by the user, an internal cached copy with norms that
    every iteration scans; the input is dead after the copy is built."""
    a = App("ml", seed, parts)
    data = a.source("data", mb=12, cost=0.3)
    norms = a.rdd([o2o(data)], mb=1, cost=0.05, name="norms")
    zipped = a.rdd([o2o(data), o2o(norms)], mb=13, cost=0.1, name="zipped")
    a.action(zipped)
    for i in range(iters):
        a.action(a.rdd([shuffle(a.rdd([o2o(zipped)], cost=0.15))], parts=1, cost=0.01, name=f"step{i}"))
    a.action(a.rdd([o2o(zipped)], cost=0.05, name="cost"))
    return a.trace()


def svdpp(seed: int = 0, parts: int = 16, iters: int = 6) -> Trace:
    """SVD++: the ratings graph is reused once per iteration and at the very end (long reuse
    distance) while each iteration caches several intermediate factor RDDs."""
    a = App("svdpp", seed, parts)
    ratings = a.source("ratings", mb=14, cost=0.5)
    g = a.rdd([o2o(ratings)], mb=5, cost=0.05, name="g0", site="g init")
    a.action(g)
    for i in range(iters):
        t1 = a.rdd([o2o(g), shuffle(a.rdd([o2o(ratings), o2o(g)], cost=0.2))], mb=5, cost=0.1, name=f"t1_{i}")
        a.action(t1)
        t2 = a.rdd([o2o(t1)], mb=5, cost=0.1, name=f"t2_{i}")
        a.action(t2)
        g = a.rdd([o2o(t2), shuffle(a.rdd([o2o(t2)], cost=0.1))], mb=5, cost=0.1, name=f"g{i + 1}")
        a.action(g)
    a.action(a.rdd([o2o(ratings), o2o(g)], cost=0.1, name="rmse"))
    return a.trace()


def zip_(seed: int = 0, parts: int = 16, rounds: int = 6) -> Trace:
    """Tasks that read several cached blocks at once: zipPartitions of two cached RDDs each round
    (peer groups of 2, result cached and read once more), and a final coalesce (peer groups of 4)."""
    a = App("zip", seed, parts)
    left, right = a.sources("left", "right", mb=8, cost=0.4)
    for k in range(rounds):
        z = a.rdd([o2o(left), o2o(right)], mb=3, cost=0.1, name=f"zip{k}")
        a.action(z)
        a.action(a.rdd([o2o(z)], cost=0.01, name=f"use{k}"))
    group = 4
    mapping = tuple(tuple(range(q * group, min(parts, (q + 1) * group))) for q in range(math.ceil(parts / group)))
    a.action(a.rdd([Dependency(left, "explicit", mapping=mapping), Dependency(right, "explicit", mapping=mapping)],
                   parts=len(mapping), cost=0.05, name="coalesced"))
    return a.trace()


def gpu_train(seed: int = 0, parts: int = 16, epochs: int = 8) -> Trace:
    """Issue 13's scenario: CPU ETL builds and caches a feature set and a lookup table of the
    same size and cost (each a parse after a shuffle). Each epoch a GPU stage (one GPU per task)
    trains on the features; then CPU jobs cache a new batch of other data (read twice, dropped
    the epoch after) and read the lookup table: the batch competes with both for the CPU
    executors' memory. Each epoch also caches its small output (predictions), which a CPU job
    reads once: dead blocks on the GPU executors, never unpersisted."""
    a = App("gpu_train", seed, parts)
    features, lookup = a.sources("features", "lookup", mb=12, cost=1.2, read_cost=0.2)
    old = None
    for i in range(epochs):
        preds = a.rdd([o2o(features)], mb=1, cost=0.4, name=f"epoch{i}")
        a.action(preds, gpus=1.0)
        batch = a.source(f"batch{i}", mb=8, cost=0.8)
        a.action(a.rdd([o2o(batch), o2o(preds)], cost=0.05, name=f"eval{i}"))
        a.action(a.rdd([o2o(batch), o2o(lookup)], cost=0.05, name=f"report{i}"))
        if old is not None:
            a.unpersist(old)
        old = batch
    return a.trace()


WORKLOADS = {"pagerank": pagerank, "cc": cc, "ml": ml, "svdpp": svdpp, "zip": zip_,
             "gpu_train": gpu_train}


def make(name: str, seed: int = 0, **kw) -> Trace:
    """A built-in workload trace by name."""
    try:
        return WORKLOADS[name](seed=seed, **kw)
    except KeyError:
        raise ValueError(f"unknown workload {name!r}; valid: {', '.join(WORKLOADS)}") from None
