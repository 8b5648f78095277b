"""Every `spark.lrc.*` configuration key, documented once, with its default and its check.

The same registry serves Spark confs (`--conf spark.lrc.policy=lerc`), keyword arguments
(`enable(spark, policy="lerc")`), the README table (`python -m spark_plugin conf`) and the JVM
shim: its jar carries these defaults (jvm_shim/build.py), `configure`/`spark-lrc-submit` set every
resolved value as a conf, and the driver plugin hands them to executors.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

PLUGIN_CLASS = "org.sparklrc.LrcPlugin"
LIVE_POLICIES = ("lru", "lrc", "lerc", "mrd", "crd")  # `min` needs the future: simulator only


def admits(policy: str, admit: str | None = None) -> bool:
    """Whether executors refuse a store that would evict a block ranked above it: `admit` is
    spark.lrc.admit (true, false or auto; None: its default); the rule is `lrc.policies.admits`,
    shared with the simulator's what-if."""
    from lrc.policies import admits as rule

    return rule(policy, BY_NAME["spark.lrc.admit"].default if admit is None else admit)


class LrcConfigError(ValueError):
    """A spark.lrc.* setting is wrong; the message says which and what is valid."""


def _choice(*valid: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        v = value.strip().lower()
        if v not in valid:
            raise LrcConfigError(f"must be one of {', '.join(valid)}; got {value!r}")
        return v
    return check


def _int_at_least(low: int) -> Callable[[str], int]:
    def check(value: str) -> int:
        try:
            n = int(value)
        except (TypeError, ValueError):
            raise LrcConfigError(f"must be a whole number; got {value!r}") from None
        if n < low:
            raise LrcConfigError(f"must be >= {low}; got {n}")
        return n
    return check


_positive_int = _int_at_least(1)
_non_negative_int = _int_at_least(0)


def _non_negative_number(value: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise LrcConfigError(f"must be a number; got {value!r}") from None
    if not 0 <= x < float("inf"):
        raise LrcConfigError(f"must be a finite number >= 0; got {value!r}")
    return x


def _bool(value: str) -> bool:
    v = str(value).strip().lower()
    if v in ("true", "1", "yes"):
        return True
    if v in ("false", "0", "no"):
        return False
    raise LrcConfigError(f"must be true or false; got {value!r}")


def _path(value: str) -> str | None:
    return value or None


def _conf_text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # 8.0 -> "8", as the defaults are written
    return str(value)


@dataclass(frozen=True)
class Key:
    """One configuration key: its Spark name, Python keyword, default, parser and doc.
    `internal` keys are test hooks: usable, but not in the user-facing table."""

    name: str
    default: str | None
    parse: Callable[[str], Any]
    doc: str
    internal: bool = False

    @property
    def kwarg(self) -> str:
        """`spark.lrc.tableWaitMs` -> `table_wait_ms`, `spark.lrc.gpu.costWeight` -> `gpu_cost_weight`."""
        short = self.name.removeprefix("spark.lrc.").replace(".", "_")
        return "".join("_" + c.lower() if c.isupper() else c for c in short)


KEYS: tuple[Key, ...] = (
    Key("spark.lrc.policy", "crd", _choice(*LIVE_POLICIES),
        "Eviction policy: crd (cost- and distance-aware: what a miss costs per byte, over the "
        "stages until the next read; with admission), lru (Spark's own order), and lrc, lerc, "
        "mrd as their papers define them."),
    Key("spark.lrc.brain", "true", _bool,
        "Attach the Python brain when a session set up by spark-lrc starts; false leaves the JVM "
        "shim alone (its events stay in the buffer for another consumer, eviction stays LRU)."),
    Key("spark.lrc.sidecar", "auto", _choice("auto", "true", "false"),
        "Run the brain as a child process of the driver JVM (py4j on loopback, with a secret). "
        "auto: when the driver is not a PySpark process (a Scala/Java application, spark-sql, "
        "spark-shell, the Thrift server); a PySpark driver runs the brain in-process."),
    Key("spark.lrc.python", None, _path,
        "Python interpreter for the sidecar brain (it must import spark_plugin); default: "
        "PYSPARK_DRIVER_PYTHON, PYSPARK_PYTHON, then python3. spark-lrc-submit sets its own."),
    Key("spark.lrc.peerMode", "task", _choice("task", "stage"),
        "LERC peer groups: task (conservative) or stage (aggressive)."),
    Key("spark.lrc.profile", None, _path,
        "A trace recorded from an earlier run of the same application, or that run's Spark event "
        "log: reference counts then cover the whole application instead of job by job."),
    Key("spark.lrc.predict", "auto", _choice("auto", "true", "false"),
        "Without a profile, predict the reads of the jobs an iterative application has not "
        "submitted yet from the jobs it repeats (RDD call sites and generations). auto: for "
        "the policies that rank by the distance to the next read (mrd, crd)."),
    Key("spark.lrc.admit", "auto", _choice("auto", "true", "false"),
        "A store never evicts a block the policy ranks above the block it stores: short of room "
        "it fails, and Spark computes that block without caching it (or writes it to disk). "
        "auto: on for crd (measured live with it, results/latest/), off for lrc, lerc and mrd."),
    Key("spark.lrc.gpu.costWeight", "8", _non_negative_number,
        "crd: a block next read by a stage whose resource profile gives each task G GPUs weighs "
        "1 + costWeight x G (a miss there leaves a GPU idle); 0: GPU stages weigh like the others."),
    Key("spark.lrc.gpu.placement", "true", _bool,
        "Move the cached inputs of a stage whose resource profile asks for GPUs into the memory of "
        "GPU executors when only executors without GPUs hold them (Spark's own block "
        "replication; the old copies go first on eviction), so later GPU stages read them "
        "locally. No GPU stage, no move."),
    Key("spark.lrc.gpu.placementBudgetMb", "256", _non_negative_int,
        "At most this many MiB of blocks are moved for one GPU stage; a move also needs room on "
        "the GPU executor without evicting a block ranked at or above the moved one."),
    Key("spark.lrc.tracePath", None, _path,
        "Write the lrc trace of this run here (Parquet; replay with `python -m lrc simulate --trace`)."),
    Key("spark.lrc.countValues", "auto", _choice("auto", "true", "false"),
        "Executors count the values of each serialized block they store (one read of the block, "
        "after the task), so that a trace's replay reserves unroll memory as Spark did. auto: "
        "on when spark.lrc.tracePath is set."),
    Key("spark.lrc.statsPath", None, _path,
        "Write spark_plugin.stats() as JSON here when the application ends."),
    Key("spark.lrc.tableWaitMs", "1000", _non_negative_int,
        "On the first task of a stage the table does not cover yet, an executor waits at most this "
        "long for the driver's plan (then proceeds with what it has); under lru, which needs no "
        "table, tasks never wait."),
    Key("spark.lrc.brainTimeoutMs", "30000", _positive_int,
        "When buffered events have waited this long for the brain (it died, was killed or "
        "hangs), the driver clears the table: executors evict in Spark's LRU order, logged once."),
    Key("spark.lrc.bufferSize", "100000", _positive_int,
        "Events the JVM buffers for the Python brain; beyond this they are dropped and counted."),
    Key("spark.lrc.publishMs", "0", _non_negative_int,
        "Reference-count changes reach the table at most this often while an executor's cache "
        "is under memory pressure (cached blocks fill half of its memory, or it evicted in the "
        "last 30 s); 0: after every batch of events the brain takes (see batchMs; only the "
        "changed partitions are sent). Without pressure, at most once a second: the table "
        "decides nothing until an executor must evict. Plans of new jobs are published at once, "
        "and so, under pressure, is a change that leaves a cached block with no read to come."),
    Key("spark.lrc.batchMs", "25", _non_negative_int,
        "Events wait in the driver JVM's buffer until the oldest has waited this long, and the "
        "brain takes them as one batch (each batch costs a py4j round trip on both sides); job "
        "starts (their plans) and, under a count-based policy with publishMs 0 while a cache is "
        "under memory pressure, task ends (their counts) end the wait at once; 0: every event at "
        "once. The brain blocks in the JVM while no events arrive, so an idle driver spends no "
        "CPU on it."),
    Key("spark.lrc.entriesField", "entries", str,
        "Name of the MemoryStore field the executor replaces (for Spark builds that renamed it)."),
    Key("spark.lrc.stateRead", "true", _bool,
        "With predictions, the newest generation of a recurring dataset that no predicted job "
        "reads keeps one read per block (an iterative application's state, read after its loop; "
        "lrc.predicted); false: none, the rule before, kept to measure the two side by side.",
        internal=True),
    Key("spark.lrc.predictKinds", "true", _bool,
        "With predictions, a job is matched to earlier ones by its result's call site and the "
        "datasets it reads (lrc.predict); false: by the call site alone, the rule before, kept "
        "to measure the two side by side.",
        internal=True),
    Key("spark.lrc.predictRecurring", "true", _bool,
        "With predictions, one more predicted job after the predicted cycle reads what the "
        "recurring jobs among the last 8 read (lrc.predict: interleaved loops and queries over "
        "the same tables); false: none, the rule before, kept to measure the two side by side.",
        internal=True),
    Key("spark.lrc.predictReuse", "true", _bool,
        "With predictions, the cached data the application used in its last 8 jobs (read by "
        "a job that caches nothing new, or cached and not read since) keeps one read per block "
        "where no predicted job reads it (lrc.predicted: an iteration's input before the loop "
        "repeats, data read by interleaved loops and queries); false: none, the rule before "
        "session 48, kept to measure the two side by side.",
        internal=True),
    Key("spark.lrc.priceShares", "true", _bool,
        "true: crd prices a rebuild as the simulator's trace does: each task's share of its "
        "duration, the later half of each executor's warm tasks, summed over the block's narrow "
        "lineage, unpersisted RDDs of it included (lrc.cost); false: the running mean of whole "
        "task durations, the rule before session 51 (results/fidelity/costs-session51/).",
        internal=True),
    Key("spark.lrc.replanMissing", "true", _bool,
        "A cached block that is missing is planned as the block a task will store again: "
        "predictions name it, not its inputs, and under admission a job's plan references "
        "neither a refused block nor what recomputing it reads (lrc.planner); false: through "
        "its inputs, the rule before, kept to measure the two side by side.",
        internal=True),
    Key("spark.lrc.storeRank", "true", _bool,
        "crd ranks a block in no executor's memory whose one read left is the running stage's "
        "last: the task storing it again is that read's, so under admission its store may "
        "evict only blocks nobody reads again (lrc.policies.crd, CRD.bind_stored); false: "
        "ranked by that read, the rule before session 53, kept to measure the two side by side.",
        internal=True),
    Key("spark.lrc.forceInstallFailure", "false", _bool,
        "Test hook: executors behave as if installing the ordered map failed (Spark's LRU stays).",
        internal=True),
)
BY_NAME: dict[str, Key] = {k.name: k for k in KEYS}
BY_KWARG: dict[str, Key] = {k.kwarg: k for k in KEYS}


@dataclass(frozen=True)
class LrcSettings:
    """Parsed settings; build with `from_conf`."""

    values: Mapping[str, Any] = field(default_factory=dict)

    def __getattr__(self, kwarg: str) -> Any:
        try:
            return self.values[kwarg]
        except KeyError:
            raise AttributeError(kwarg) from None

    def as_spark_conf(self) -> dict[str, str]:
        """Every set value as a Spark conf, in the form the defaults are written."""
        return {k.name: _conf_text(self.values[k.kwarg]) for k in KEYS
                if self.values[k.kwarg] is not None}

    @classmethod
    def from_conf(cls, conf: Mapping[str, str] | None = None, **kwargs: Any) -> "LrcSettings":
        """Merge Spark conf entries and keyword arguments (keywords win); validate every value.

        Unknown `spark.lrc.*` keys and unknown keywords are errors, so a typo never silently
        falls back to a default.
        """
        raw: dict[str, str | None] = {k.kwarg: k.default for k in KEYS}
        for name, value in (conf or {}).items():
            if not name.startswith("spark.lrc."):
                continue
            if name not in BY_NAME:
                raise LrcConfigError(f"unknown configuration key {name!r}; known: {', '.join(BY_NAME)}")
            raw[BY_NAME[name].kwarg] = value
        for kw, value in kwargs.items():
            if kw not in BY_KWARG:
                raise LrcConfigError(f"unknown option {kw!r}; known: {', '.join(BY_KWARG)}")
            if value is not None:
                raw[kw] = str(value)
        parsed: dict[str, Any] = {}
        for key in KEYS:
            value = raw[key.kwarg]
            try:
                parsed[key.kwarg] = None if value is None else key.parse(value)
            except LrcConfigError as e:
                raise LrcConfigError(f"{key.name}: {e}") from None
        return cls(parsed)


def markdown_table() -> str:
    """The configuration table for the README (user-facing keys only)."""
    rows = ["| key | default | meaning |", "|---|---|---|"]
    rows += [f"| `{k.name}` | `{k.default}` | {k.doc} |" for k in KEYS if not k.internal]
    return "\n".join(rows)
