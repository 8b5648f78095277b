"""Predicted references: what the jobs an iterative application has not submitted yet will read.

Online, the planner learns a job's reads only when Spark submits the job, so between jobs (and
inside a job, once a stage has read it) a dataset every iteration reads has no references left
and ties with dead blocks. Iterative applications submit the same job shape again and again,
and what is stable across iterations is where the code created each RDD (Spark's call site,
reported for Python, Scala and SQL alike) and which *generation* of a recurring dataset a job
reads: ``ranks`` of the previous iteration, ``links`` every time.

So each job is remembered as a *shape*: its signature (the call site of its result stage's RDD)
and, per stage, every task's reads as ``(dataset call site, generation, partition)``, the
generation counted back from the newest one that existed before the job was submitted (0: the
newest). A job's *kind* is its signature and the datasets it reads (one helper applied to
different data makes jobs of one signature and different kinds). When the job just submitted
has a kind seen before - else a signature, as a loop's first iteration reads an initial
generation created elsewhere - the jobs that followed it last time are predicted to follow
again, one cycle ahead; their reads are mapped onto today's generations
(a generation the predicted jobs will create themselves is skipped: it does not exist yet), so
the newest generation inherits its predecessor's references and superseded ones get none. The
next real job replaces every prediction; a kind whose predictions failed ``max_fails`` times
in a row predicts nothing until it is right again.

Loops of different periods interleave (zip pairs every round, a third pair every third round, a
join every other; a SQL application's queries over the same cached tables), so which job follows
a kind changes from one occurrence to the next, its predictions fail and stop, and the datasets
every recent job read are left with no reference at all: ranked with the dead, first out. So
after the cycle comes one more predicted job, the *recurring tail*: it reads what the recurring
kinds among the last ``window`` jobs read (those seen at least twice) that the cycle does not
predict already. Only while the newest job's kind recurs itself: a job never seen before says
the application changed pattern, and what the loop read is left to decay.
"""
from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

TAIL_WINDOW = 8  # jobs the recurring tail looks back over
Key = tuple[str, int, int]  # (dataset call site, generation back from the newest, partition)
_EXPR_IDS = re.compile(r"#\d+L?")  # Spark SQL expression ids: new ones in every query plan


def dataset_name(call_site: str, name: str) -> str:
    """Where the code created an RDD: its call site, and the name the application gave it
    without a trailing iteration number or SQL expression ids (``labels_7`` -> ``labels``):
    PySpark reports one JVM call site for every PythonRDD, so the name tells them apart."""
    return f"{call_site} {_EXPR_IDS.sub('', name).rstrip('0123456789_')}"


@dataclass(frozen=True)
class JobShape:
    """One job as a pattern: ``stages`` holds, per planned stage in run order, each task's reads."""

    signature: str
    stages: tuple[tuple[tuple[Key, ...], ...], ...]
    new_generations: tuple[tuple[str, int], ...]  # datasets this job adds generations to
    weights: tuple[float, ...] = ()  # per stage: what a miss there costs (GPU stages weigh more)
    # the datasets the job reads: with the signature, what tells apart the jobs of one generic
    # helper applied to different data (``left.zip(right)`` on a and b, then on b and c)
    inputs: tuple[str, ...] = ()

    @property
    def kind(self) -> tuple[str, tuple[str, ...]]:
        return self.signature, self.inputs

    @classmethod
    def merged(cls, shapes: Sequence["JobShape"]) -> "JobShape":
        """One job that reads what ``shapes`` read: their k-th stages' tasks side by side. It
        creates no generation: it is the last job predicted (the recurring tail)."""
        if len(shapes) == 1:
            return shapes[0]
        n = max(len(s.stages) for s in shapes)
        stages = tuple(tuple(t for s in shapes if k < len(s.stages) for t in s.stages[k])
                       for k in range(n))
        weights: tuple[float, ...] = ()
        if any(s.weights for s in shapes):
            weights = tuple(max(s.weights[k] if k < len(s.weights) else 1.0
                                for s in shapes if k < len(s.stages)) for k in range(n))
        return cls(shapes[0].signature, stages, (), weights,
                   tuple(sorted({i for s in shapes for i in s.inputs})))


class Predictor:
    """Job shapes seen so far, and the cycle they predict (see module docstring)."""

    def __init__(self, max_jobs: int = 16, max_fails: int = 2, history: int = 64,
                 kinds: bool = True, window: int = TAIL_WINDOW) -> None:
        self.max_jobs, self.max_fails, self.history = max_jobs, max_fails, history
        self.kinds = kinds  # False: jobs matched by signature alone (the rule before kinds)
        self.window = window  # jobs the recurring tail looks back over; 0: none (the rule before)
        self.shapes: list[JobShape] = []
        self.fails: Counter[tuple] = Counter()  # by JobShape.kind
        self._expected: tuple[tuple, tuple] | None = None  # (predicting kind, next predicted)

    def observe(self, shape: JobShape) -> None:
        """A real job was submitted: score the last prediction, remember the shape."""
        if self._expected is not None:
            source, predicted = self._expected
            if predicted == self._kind(shape):
                self.fails.pop(source, None)
            else:
                self.fails[source] += 1
        self.shapes.append(shape)
        del self.shapes[:-self.history]

    def cycle(self) -> list[JobShape]:
        """The jobs predicted to follow the newest one: those that followed its previous
        occurrence, up to and including the newest job's own shape (one period ahead), then the
        recurring tail (module docstring)."""
        out = self._period()
        return out + self._recurring_tail(out)

    def _recurring_tail(self, cycle: list[JobShape]) -> list[JobShape]:
        if not self.window or not self.shapes:
            return []
        seen = Counter(self._kind(s) for s in self.shapes)
        if seen[self._kind(self.shapes[-1])] < 2:
            return []
        skip = {self._kind(s) for s in cycle}
        tail: dict[tuple, JobShape] = {}  # the newest job of each kind
        for s in reversed(self.shapes[-self.window:]):
            k = self._kind(s)
            if k not in skip and seen[k] >= 2:
                tail.setdefault(k, s)
        return [JobShape.merged(list(tail.values())[::-1])] if tail else []

    def _period(self) -> list[JobShape]:
        self._expected = None
        if not self.shapes:
            return []
        last = self.shapes[-1]
        kind = self._kind(last)
        # the previous job of the same kind; else of the same signature (a loop's first
        # iteration reads the initial generation from another call site than the next ones)
        for same in (lambda s: self._kind(s) == kind, lambda s: s.signature == last.signature):
            for i in range(len(self.shapes) - 2, -1, -1):
                if same(self.shapes[i]):
                    out = self.shapes[i + 1:][:self.max_jobs]
                    self._expected = (kind, self._kind(out[0]))
                    # a kind whose predictions keep failing predicts nothing, but is still
                    # scored: right once, it predicts again
                    return out if self.fails[kind] < self.max_fails else []
        return []

    def _kind(self, shape: JobShape) -> tuple:
        return shape.kind if self.kinds else (shape.signature,)


def shape_of(signature: str, stages: Sequence[Sequence[Sequence[Hashable]]],
             key: "callable", new_generations: Counter[str],
             weights: Sequence[float] = ()) -> JobShape:
    """A JobShape from a job's planned tasks (per stage, each task's reads, and its ``weights``
    if any); ``key`` maps a block to its Key, or None for one the prediction cannot name (then
    it is left out)."""
    key = functools.cache(key)  # (a block is read by many tasks: named once)
    out, kept, inputs = [], [], set()
    for i, tasks in enumerate(stages):
        keyed = []
        for reads in tasks:
            ks = tuple(filter(None, map(key, reads)))  # (a Key is a non-empty tuple)
            if ks:
                keyed.append(ks)
                inputs.update(k[0] for k in ks)
        if keyed:
            out.append(tuple(keyed))
            kept.append(weights[i] if i < len(weights) else 1.0)
    return JobShape(signature, tuple(out), tuple(sorted(new_generations.items())),
                    tuple(kept) if any(w != 1.0 for w in kept) else (), tuple(sorted(inputs)))
