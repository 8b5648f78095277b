"""Spark event logs -> `lrc.trace.Trace`: what-if analysis and profiles from the logs every Spark
deployment already keeps (``spark.eventLog.enabled``), without an earlier spark-lrc run.

Input: the lines ``lrc.eventlog_files`` reads (plain or compressed, single file or rolling
directory, ``.inprogress`` up to the last whole line).

What becomes of the log (field names are Spark's):

- DAG: ``SparkListenerJobStart``'s "Stage Infos": each stage's "RDD Info" (RDD ID, Name,
  Callsite, Parent IDs, Storage Level, Number of Partitions; the first is the stage's final RDD).
  A parent listed in the same stage is a narrow dependency (kind ``unknown``: one-to-one when the
  partition counts match, else every parent partition; ``UnionRDD`` and ``CartesianRDD`` get
  their exact ``range`` / ``explicit`` mapping from the partition counts), one outside it a
  shuffle: the same rule the live plugin applies to listener data without its lineage walk
  (``spark_plugin.events``). A stage of a job that is never submitted is a skipped stage, as
  live; a stage another depends on writes a shuffle, numbered by its final RDD (the log has no
  shuffle ids), so that a later job's map stage of a shuffle written before is predicted
  skipped, as live. An RDD is cached if its storage level was ever valid (memory or disk).
- Events in log order: job start, stage submitted, successful task ends (stage, partition
  from "Partition ID", else "Index", executor, duration = Finish Time - Launch Time),
  stage completed, unpersist (``SparkListenerUnpersistRDD``), job end. The jobs' Submission and
  Completion Times give ``EventLogTrace.jobs_span_s``; each executor's "Total Cores"
  (``SparkListenerExecutorAdded``) tells which tasks ran cold (``lrc.cost.ColdStarts``).
- Reads and creates of each task: derived from the DAG by ``lrc.derive`` - the function the
  live recorder uses - so the two traces of one run give the same reference counts.
- Block sizes (``EventLogTrace.size_source`` says which, per cached RDD): ``measured`` from
  ``SparkListenerBlockUpdated`` (``spark.eventLog.logBlockUpdates.enabled=true``), as the live
  recorder (a cached RDD with none was ``never_stored``: GraphX's ``VertexRDDImpl`` reports its
  partitions' storage level and stores nothing itself); without block updates, estimates:
  ``rdd_info`` (the "Memory Size"/"Disk Size" in the RDD Info of completed stages, over its
  cached partitions: older Spark versions fill it), else from the tasks' "Input Metrics"
  (``lrc.eventlog_sizes``: a task counts each cached block it found in its "Bytes Read"):
  ``input_metrics`` (every block told by the tasks that read it), ``inherited`` (another
  generation's: the RDD was only ever read with other unknown blocks), ``shared`` (those tasks'
  bytes shared evenly); else ``unknown`` (1 byte per block: cache sizes can then only be
  fractions of the working set).
- Value counts of cached blocks (the unroll reservation steps by them, ``lrc.unroll``): from
  the "Records Read" of tasks that found every block they read, once (``lrc.eventlog_sizes``).

Bad input never produces anything but ``ValueError`` (naming the file, the line and the
problem) or a warning on the ``lrc.eventlog`` logger for what could be skipped: lines that are
not JSON or not events, unknown event types (counted, debug), a truncated last line or
compressed stream, events with fields out of range. The warnings are also returned
(``EventLogTrace.warnings``) for reports.
"""
from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any, Callable

from lrc.dag import RDD, AppDAG, Block, Dependency, Job, Stage, parse_block
from lrc.derive import build_trace
from lrc.eventlog_sizes import estimate_blocks
from lrc.eventlog_result import ESTIMATED, EventLogTrace
from lrc.eventlog_fields import (IGNORED_EVENTS, MAX_ID, FieldError, get_field, gpus_per_task,
                                 id_list, int_field, list_field, storage_level, str_field)
from lrc.execmem import executor_memory, storage_fraction_of
from lrc.unroll import SPARK_UNROLL_THRESHOLD, threshold_of
from lrc.eventlog_files import codec_of, eventlog_files, is_eventlog, lines  # noqa: F401 - is_eventlog is this module's API too
from lrc.trace import Event, Trace

log = logging.getLogger("lrc.eventlog")

MAX_PARTITIONS = 10_000_000  # a cached RDD's per-partition arrays are allocated: sanity limit
MAX_BYTES = 2**62
MAX_TASK_BLOCKS = 500_000  # blocks one task's narrow lineage may cover (hostile fan-outs)
MAX_EXPLICIT = 100_000  # a larger CartesianRDD gets no per-partition mapping (memory): unknown deps
MAX_DURATION_MS = 366 * 24 * 3600 * 1000  # a task longer than a year is a corrupt timestamp


def _count(v: Any) -> int:
    """A metric's count if it is a plausible one, else 0 (not counted)."""
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_BYTES else 0


_MAX_WARNINGS_LOGGED = 20


# ---- the parser ------------------------------------------------------------------------------
@dataclass
class _RddInfo:
    id: int
    name: str
    callsite: str
    parts: int
    parents: tuple[int, ...]
    narrow: set[int] = field(default_factory=set)
    level: str = "NONE"


class _Parser:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.out = EventLogTrace(Trace(AppDAG()), path)
        self.rdds: dict[int, _RddInfo] = {}
        self.stages: dict[int, Stage] = {}
        self.jobs: dict[int, Job] = {}
        self.events: list[Event] = []
        self.task_bytes: list[int] = []  # Input Metrics Bytes Read per task event, in order
        self.task_records: list[int] = []  # and Records Read
        self.sizes: dict[Block, int] = {}
        self.ever_cached: dict[int, str] = {}
        self.info_sizes: dict[int, tuple[int, int]] = {}  # rdd -> (bytes, cached partitions)
        self.cores: dict[str, int] = {}  # executor -> its Total Cores
        self.job_times = (2**62, 0)  # earliest, latest job submission / completion logged (ms)
        self.memory: dict[str, int] = {}  # executor -> its unified memory (block manager, on heap)
        self.storage_fraction: float | None = None  # spark.memory.storageFraction, when set
        self.unroll_threshold = SPARK_UNROLL_THRESHOLD  # spark.storage.unrollMemoryThreshold
        self.gpus: dict[int, float] = {}  # resource profile -> GPUs per task (stage-level)
        self.shuffle_ids: dict[int, int] = {}  # a map stage's final RDD -> its shuffle's number
        self.skipped: Counter = Counter()
        # an attempt on part of its stage -> its submission and its tasks' partitions (set last)
        self.part_attempts: dict[tuple[Any, Any], tuple[Event, set[int]]] = {}
        self._logged = 0

    def warn(self, msg: str) -> None:
        self.out.warnings.append(msg)
        if self._logged < _MAX_WARNINGS_LOGGED:
            log.warning("%s", msg)
        elif self._logged == _MAX_WARNINGS_LOGGED:
            log.warning("%s: further warnings not logged (see EventLogTrace.warnings)", self.path)
        self._logged += 1

    # each handler raises FieldError for a malformed event
    def job_start(self, e: dict) -> None:
        job = int_field(e, "Job ID")
        stage_ids = []
        for si in list_field(e, "Stage Infos"):
            stage_ids.append(self._stage(si, job))
        self.jobs[job] = Job(job, tuple(stage_ids))
        self._number_shuffles(stage_ids)
        self.events.append(Event.job_start(job))
        self._job_time(e, "Submission Time")

    def _number_shuffles(self, stage_ids: list[int]) -> None:
        """A stage another depends on writes a shuffle, known by its final RDD (two shuffles of
        one RDD are taken for one: should the second's map stage run, it is planned then)."""
        parents = {p for s in stage_ids for p in self.stages[s].parent_ids}
        for s in stage_ids:
            st = self.stages[s]
            if s in parents and st.shuffle < 0:
                st.shuffle = self.shuffle_ids.setdefault(st.rdd_id, len(self.shuffle_ids))

    def _stage(self, si: Any, job: int) -> int:
        sid = int_field(si, "Stage ID")
        tasks = int_field(si, "Number of Tasks")
        infos = list_field(si, "RDD Info")
        if not infos:
            raise FieldError(f"stage {sid} has an empty 'RDD Info'")
        parsed = []
        for ri in infos:
            rid = int_field(ri, "RDD ID")
            parents = id_list(list_field(ri, "Parent IDs"), f"RDD {rid}: parent RDD id")
            parts = int_field(ri, "Number of Partitions", 0, MAX_PARTITIONS)
            level = storage_level(get_field(ri, "Storage Level"))
            parsed.append((rid, str_field(ri, "Name", ""), str_field(ri, "Callsite", ""), parts,
                           tuple(parents), level))
        in_stage = {p[0] for p in parsed}
        for rid, name, callsite, parts, parents, level in parsed:
            r = self.rdds.get(rid)
            if r is None:
                r = self.rdds[rid] = _RddInfo(rid, name, callsite, parts, parents)
            elif r.parts != parts:
                raise FieldError(f"RDD {rid} has {parts} partitions here, {r.parts} earlier")
            r.narrow.update(p for p in parents if p in in_stage)
            r.level = level
            if level != "NONE":
                self.ever_cached[rid] = level
        final = parsed[0][0]
        parts = parsed[0][3]
        stage_parents = id_list(list_field(si, "Parent IDs"), f"stage {sid}: parent stage id")
        profile = int_field(si, "Resource Profile Id") if "Resource Profile Id" in si else 0
        self.stages[sid] = Stage(sid, final, tasks, tuple(stage_parents), job,
                                 None if tasks >= parts else tuple(range(tasks)),
                                 gpus=self.gpus.get(profile, 0.0))
        return sid

    def stage_event(self, e: dict, kind: str) -> None:
        si = get_field(e, "Stage Info")
        sid = int_field(si, "Stage ID")
        if sid not in self.stages:
            raise FieldError(f"stage {sid} was never part of a job start")
        if kind == "stage_completed":
            for ri in si.get("RDD Info") or ():
                if not isinstance(ri, dict):
                    continue
                try:
                    rid = int_field(ri, "RDD ID")
                    mem = int_field(ri, "Memory Size", 0, MAX_BYTES) if "Memory Size" in ri else 0
                    disk = int_field(ri, "Disk Size", 0, MAX_BYTES) if "Disk Size" in ri else 0
                    n = int_field(ri, "Number of Cached Partitions", 0, MAX_PARTITIONS) \
                        if "Number of Cached Partitions" in ri else 0
                except FieldError:
                    continue
                if max(mem, disk) > 0 and n > 0:
                    old = self.info_sizes.get(rid, (0, 0))
                    if max(mem, disk) / n > (old[0] / old[1] if old[1] else 0):
                        self.info_sizes[rid] = (max(mem, disk), n)
        ev = Event(kind, stage_id=sid)
        n, attempt = si.get("Number of Tasks"), si.get("Stage Attempt ID", 0)
        if kind == "stage_submitted" and isinstance(n, int) and (
                attempt != 0 or n < self._parts(sid)):
            self.part_attempts[(sid, attempt)] = (ev, set())  # a rerun, a take's later scan
        self.events.append(ev)

    def _attempt_task(self, e: dict) -> None:
        """A task (any outcome) of an attempt on part of its stage: one of its partitions."""
        attempt = self.part_attempts.get((e.get("Stage ID"), e.get("Stage Attempt ID")))
        ti = e.get("Task Info")
        if attempt is not None and isinstance(ti, dict):
            p = ti.get("Partition ID", -1)
            p = ti.get("Index") if p is None or p == -1 else p
            if type(p) is int and 0 <= p < self._parts(e["Stage ID"]):
                attempt[1].add(p)

    def _parts(self, sid: int) -> int:
        """Partitions of the stage's final RDD (0 when no job start described it)."""
        return getattr(self.rdds.get(self.stages[sid].rdd_id), "parts", 0)

    def task_end(self, e: dict) -> None:
        self._attempt_task(e)
        reason = get_field(e, "Task End Reason")
        if not (isinstance(reason, dict) and reason.get("Reason") == "Success"):
            return
        ti = get_field(e, "Task Info")
        if not isinstance(ti, dict):
            raise FieldError("field 'Task Info' must be an object")
        if ti.get("Failed") is True or ti.get("Killed") is True:
            return
        sid = int_field(e, "Stage ID")
        if sid not in self.stages:
            raise FieldError(f"task of stage {sid}, which no job start listed")
        part = ti.get("Partition ID", -1)
        if part is None or part == -1:  # older Spark: no Partition ID; the task index is it
            part = int_field(ti, "Index")
        else:
            part = int_field(ti, "Partition ID")
        if not 0 <= part < (n := self.rdds[self.stages[sid].rdd_id].parts):
            raise FieldError(f"task of stage {sid}: partition {part} is not one of its RDD's "
                             f"{n} partitions")
        launch = int_field(ti, "Launch Time", 0, 2**62)
        finish = int_field(ti, "Finish Time", 0, 2**62)
        dur = finish - launch
        if not 0 <= dur <= MAX_DURATION_MS:
            raise FieldError(f"task duration {dur} ms (Finish Time - Launch Time) is out of range")
        executor = str_field(ti, "Executor ID")
        nbytes, nrecords, claim = 0, 0, None
        tm = e.get("Task Metrics")
        if isinstance(tm, dict):
            if isinstance(tm.get("Input Metrics"), dict):
                nbytes = _count(tm["Input Metrics"].get("Bytes Read", 0))
                nrecords = _count(tm["Input Metrics"].get("Records Read", 0))
            # Spark 4's pool allocation peak (lrc.execmem); older logs have none
            v = tm.get("Peak On Heap Execution Memory")
            if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_BYTES:
                claim = v
        self.events.append(Event.task(sid, part, executor=executor, duration_s=dur / 1000,
                                      exec_bytes=claim))
        self.task_bytes.append(nbytes)
        self.task_records.append(nrecords)
        self.out.executors.add(executor)

    def job_end(self, e: dict) -> None:
        self.events.append(Event.job_end(int_field(e, "Job ID")))
        self._job_time(e, "Completion Time")

    def _job_time(self, e: dict, key: str) -> None:
        if key in e:  # (optional: the span is then what the logged jobs say)
            t = int_field(e, key, 0, 2**62)
            self.job_times = min(self.job_times[0], t), max(self.job_times[1], t)

    def unpersist(self, e: dict) -> None:
        self.events.append(Event.unpersist(int_field(e, "RDD ID")))

    def block_update(self, e: dict) -> None:
        info = get_field(e, "Block Updated Info")
        b = parse_block(str_field(info, "Block ID"))
        if b is None:
            return
        if b[0] > MAX_ID or b[1] > MAX_PARTITIONS:
            raise FieldError(f"block {b} has an out-of-range id")
        size = max(int_field(info, "Memory Size", 0, MAX_BYTES), int_field(info, "Disk Size", 0, MAX_BYTES))
        if size > 0:
            self.sizes[b] = max(size, self.sizes.get(b, 0))

    def log_start(self, e: dict) -> None:
        self.out.spark_version = str_field(e, "Spark Version", "")

    def app_start(self, e: dict) -> None:
        self.out.app_id = str_field(e, "App ID", "")
        self.out.app_name = str_field(e, "App Name", "")

    def executor_added(self, e: dict) -> None:
        info = e.get("Executor Info")
        if isinstance(info, dict) and "Total Cores" in info:
            self.cores[str_field(e, "Executor ID", "")] = int_field(info, "Total Cores", 1, 1 << 20)

    def block_manager(self, e: dict) -> None:
        bm = get_field(e, "Block Manager ID")
        key = "Maximum Onheap Memory" if "Maximum Onheap Memory" in e else "Maximum Memory"
        self.memory[str_field(bm, "Executor ID")] = int_field(e, key, 0, MAX_BYTES)

    def environment(self, e: dict) -> None:
        props = get_field(e, "Spark Properties") or {}
        try:
            sf = storage_fraction_of(props)
            self.unroll_threshold = threshold_of(props)
        except ValueError as err:
            raise FieldError(str(err)) from None
        if sf is not None:
            self.storage_fraction = sf

    def resource_profile(self, e: dict) -> None:
        self.gpus[int_field(e, "Resource Profile Id")] = gpus_per_task(e)

    def parse(self, files: list[Path], progress=None) -> None:
        handlers: dict[str, Callable[[dict], None]] = {
            "SparkListenerJobStart": self.job_start,
            "SparkListenerStageSubmitted": lambda e: self.stage_event(e, "stage_submitted"),
            "SparkListenerStageCompleted": lambda e: self.stage_event(e, "stage_completed"),
            "SparkListenerTaskEnd": self.task_end,
            "SparkListenerJobEnd": self.job_end,
            "SparkListenerUnpersistRDD": self.unpersist,
            "SparkListenerBlockUpdated": self.block_update,
            "SparkListenerLogStart": self.log_start,
            "SparkListenerApplicationStart": self.app_start,
            "SparkListenerExecutorAdded": self.executor_added,
            "SparkListenerResourceProfileAdded": self.resource_profile,
            "SparkListenerBlockManagerAdded": self.block_manager,
            "SparkListenerEnvironmentUpdate": self.environment,
        }
        out = self.out
        seen_event = False
        complete = False
        loads = json.loads
        for path, n, line, last in lines(files, self.warn, progress):
            out.lines += 1
            try:
                e = loads(line)
            except (ValueError, RecursionError) as err:
                if not seen_event:
                    raise ValueError(f"{path}:{n}: not a Spark event log: the first line is not "
                                     f"JSON ({err}): {line[:80]!r}") from None
                if last:
                    self.warn(f"{path}:{n}: the last line is cut off (the application was still "
                              "running or was killed): ignored")
                else:
                    self.skipped["not JSON"] += 1
                    self.warn(f"{path}:{n}: not JSON, skipped: {line[:80]!r}")
                continue
            kind = e.get("Event") if isinstance(e, dict) else None
            if not isinstance(kind, str):
                if not seen_event:
                    raise ValueError(f"{path}:{n}: not a Spark event log: the first line is not "
                                     f"a listener event: {line[:80]!r}")
                self.skipped["not an event"] += 1
                self.warn(f"{path}:{n}: not a listener event (no 'Event' field), skipped")
                continue
            seen_event = True
            handler = handlers.get(kind)
            if handler is None:
                if kind == "SparkListenerApplicationEnd":
                    complete = True
                elif kind not in IGNORED_EVENTS:
                    out.unknown_events[kind] += 1
                continue
            try:
                handler(e)
            except (FieldError, AttributeError, TypeError, KeyError) as err:  # wrong shapes too
                if kind == "SparkListenerJobStart":
                    raise ValueError(f"{path}:{n}: malformed {kind}: {err}") from None
                self.skipped[kind] += 1
                self.warn(f"{path}:{n}: malformed {kind}, skipped: {err}")
            except RecursionError:
                self.skipped[kind] += 1
                self.warn(f"{path}:{n}: malformed {kind} (nested too deeply), skipped")
        if not seen_event:
            raise ValueError(f"{self.path}: empty event log (no events)")
        out.complete = complete
        if not complete:
            self.warn(f"{self.path}: no SparkListenerApplicationEnd: the application was still "
                      f"running or was killed; using the {len(self.jobs)} jobs logged")
        if out.unknown_events:
            log.debug("%s: ignored event types: %s", self.path, dict(out.unknown_events))

    # ---- the trace -------------------------------------------------------------------------
    def _deps(self, r: _RddInfo) -> tuple[Dependency, ...]:
        known = [self.rdds.get(p) for p in r.parents]
        narrow = [p for p in r.parents if p in r.narrow]
        if r.name == "UnionRDD" and all(known) and narrow == list(r.parents) and \
                sum(k.parts for k in known) == r.parts:
            out, start = [], 0
            for k in known:
                out.append(Dependency(k.id, "range", 0, start, k.parts))
                start += k.parts
            return tuple(out)
        if r.name == "CartesianRDD" and len(r.parents) == 2 and all(known) and \
                narrow == list(r.parents) and known[0].parts * known[1].parts == r.parts and \
                r.parts <= MAX_EXPLICIT:
            nb = known[1].parts
            return (Dependency(known[0].id, "explicit", mapping=[(p // nb,) for p in range(r.parts)]),
                    Dependency(known[1].id, "explicit", mapping=[(p % nb,) for p in range(r.parts)]))
        return tuple(Dependency(p, "unknown" if p in r.narrow else "shuffle")
                     for p in r.parents if p in self.rdds)

    def build(self) -> EventLogTrace:
        out = self.out
        if not self.jobs:
            raise ValueError(f"{self.path}: the event log has no SparkListenerJobStart: no job to "
                             "build a trace from")
        dag = AppDAG()
        for r in self.rdds.values():
            missing = [p for p in r.parents if p not in self.rdds]
            if missing:
                self.warn(f"{self.path}: RDD {r.id} has parents no stage listed ({missing}): "
                          "treated as inputs")
            dag.add_rdd(RDD(r.id, r.parts, self._deps(r), storage_level=r.level,
                            cached=r.level != "NONE", name=r.name, call_site=r.callsite))
        for s in self.stages.values():
            dag.add_stage(s)
        for j in self.jobs.values():
            dag.add_job(j)
        for ev, parts in self.part_attempts.values():
            ev.partitions = tuple(sorted(parts))
        try:
            dag.validate()
            trace = build_trace(dag, self.events, self.sizes, self.ever_cached,
                                name=f"eventlog:{out.app_name or out.app_id or self.path.name}",
                                limit=MAX_TASK_BLOCKS, cores=self.cores)
        except ValueError as e:
            raise ValueError(f"{self.path}: implausible DAG: {e}") from None
        # the memory the tasks' execution claims were made in (lrc.execmem): the executors'
        # (in local mode the driver is the executor)
        trace.executor_memory = executor_memory(self.memory)
        trace.storage_fraction = self.storage_fraction
        trace.unroll_threshold = self.unroll_threshold
        out.trace = trace
        out.tasks = len(self.task_bytes)
        out.cores = int(median(self.cores.values())) if self.cores else 0
        if self.job_times[1] > self.job_times[0]:
            out.jobs_span_s = (self.job_times[1] - self.job_times[0]) / 1000
        self._estimate_sizes(trace)
        if not self.ever_cached:
            self.warn(f"{self.path}: the application caches no RDD: nothing for a cache policy "
                      "to decide")
        return out

    def _estimate_sizes(self, trace: Trace) -> None:
        """Sizes the log did not measure, and every cached block's value count, from the tasks'
        Input Metrics (``lrc.eventlog_sizes``)."""
        self.out.size_source, self.out.count_source = estimate_blocks(
            trace, self.ever_cached, self.sizes, self.info_sizes, self.task_bytes, self.task_records)
        unknown = sorted(r for r, s in self.out.size_source.items() if s == "unknown")
        if unknown:
            self.warn(f"{self.path}: no block size known for cached RDDs {unknown[:20]} (enable "
                      "spark.eventLog.logBlockUpdates.enabled for measured sizes): 1 byte per block")
        est = sorted(r for r, s in self.out.size_source.items() if s in ESTIMATED)
        if est:
            log.info("%s: block sizes of cached RDDs %s are estimates", self.path, est[:20])


def read_eventlog(path: str | Path, progress: bool | None = False) -> EventLogTrace:
    """Parse the Spark event log at ``path`` (file or rolling directory) into a trace.
    ``progress``: a tqdm bar on stderr (None: only for logs over 50 MB on a terminal)."""
    path = Path(path)
    parser = _Parser(path)
    files = eventlog_files(path, parser.warn)
    parser.out.files = files
    bar = None
    total = sum(f.stat().st_size for f in files)
    if progress is None:
        progress = total > 50 << 20
    if progress:
        try:
            from tqdm import tqdm

            plain = all(codec_of(f, f.open("rb").read(16)) is None for f in files)
            bar = tqdm(total=total if plain else None, unit="B", unit_scale=True,
                       desc="reading event log", leave=False, disable=None)
        except (ImportError, OSError):
            bar = None
    tick = bar.update if bar is not None else None

    try:
        parser.parse(files, tick)
    finally:
        if bar is not None:
            bar.close()
    return parser.build()


def eventlog_trace(path: str | Path) -> Trace:
    """Just the trace of the event log at ``path``."""
    return read_eventlog(path).trace
