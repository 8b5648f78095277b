"""The driver-side brain: drains shim events, keeps an `lrc.Planner` current, publishes tables.

One daemon thread. Events arrive from the JVM's bounded buffer (never through py4j callbacks, which
would run on Spark's listener thread). Anything that goes wrong here is logged once and the
brain falls back to Spark's LRU by clearing the table: the application never fails because of it.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict, defaultdict
from typing import Any, Callable

from lrc.cost import ColdStarts
from lrc.planner import Planner
from lrc.trace import load_trace

from .bridge import JvmBridge
from . import wire
from .config import LrcSettings, admits
from .events import StageMemory, blocks, in_memory, job_from_event
from .gcpause import gc_paused
from .gpu_moves import GpuPlacement
from .metrics import Metrics
from .placement import gpus_of
from .pressure import PublishPace
from .recorder import TraceRecorder, memory_conf, write_outputs

log = logging.getLogger("spark_lrc")
Block = tuple[int, int]
PUBLISHED_STAGES = 1024  # as many as an executor remembers planned (PriorityEntries.RECENT_PLANNED)


class Brain:
    """Owns the Planner for one SparkContext; see module docstring."""

    def __init__(self, bridge: JvmBridge, settings: LrcSettings):
        self.bridge = bridge
        self.settings = settings
        self.metrics = Metrics(settings.policy)
        self.pace = PublishPace(settings.publish_ms, settings.policy, bridge)
        self.recorder = TraceRecorder(*memory_conf(bridge)) if settings.trace_path else None
        self.version = 0
        self.degraded: str | None = None  # why we fell back to LRU, if we did
        self.last_fallback: str | None = None  # why, also after a resynchronisation
        self.resyncs = 0  # times the brain rebuilt its state from Spark's after lost events
        self._resync_wanted = False
        self._dropped_seen = 0  # the JVM's drop count when the stream was last whole
        self.executors: dict[str, dict[str, Any]] = {}
        self.cold_starts = ColdStarts(lambda e: self.executors.get(e, {}).get("cores"))
        self.stage_memory = StageMemory()  # stages job starts described (they name them later)
        self._job_stages: list[wire.StageInfo] = []  # the current job start's, resolved
        # the last stages announced planned (a fall-back re-announces them: nobody waits)
        self._published_stages: OrderedDict[int, None] = OrderedDict()
        self._start_plans()
        self._dirty = False  # events applied since the last publish
        self._cpu_s = 0.0
        self.batches = 0  # drains that brought events (each a py4j round trip) ...
        self.events = 0  # ... and the events they brought
        self._last_publish = self._last_metrics = 0.0
        self._lock = threading.RLock()  # the state below; held while applying a batch
        self._consume = threading.Lock()  # the event buffer: held from drain to applied
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed, self._final = False, None  # closed: _final holds the stats close() wrote
        self._warned: set[str] = set()
        self._handlers: dict[type, Callable[[Any], None]] = {
            wire.JobStart: self._job_start,
            wire.StageSubmitted: lambda ev: self._planner_call("stage_submitted", ev.stage, ev.parts),
            wire.StageCompleted: self._stage_completed,
            wire.JobEnd: self._job_end,
            wire.TaskEnd: self._task_end,
            wire.TaskCache: self._task_cache,
            wire.BlockUpdate: self._block,
            wire.BlockManagerAdded: lambda ev: self.pace.pressure.unified(ev.executor, ev.mem),
            wire.Unpersist: self._unpersist,
            wire.ExecutorAdded: self._executor_added,
            wire.ExecutorRemoved: self._executor_removed,
            wire.ExecutorPlugin: lambda ev: self.metrics.executor_plugin(
                ev.executor, ev.installed, ev.error),
            wire.TableInForce: lambda ev: self.metrics.executor_wait_ms.append(float(ev.waited_ms)),
            wire.TableApplied: lambda ev: self.metrics.table_applied(ev.executor, ev.version, ev.lag_ms),
        }

    def _start_plans(self) -> None:
        """A new planner and placement, and no RDD in the executors' table: at start, and when
        the brain resynchronises (the fallback before it removed every array and move)."""
        s = self.settings
        profile = load_trace(s.profile) if s.profile else None
        predict = {"auto": None, "true": profile is None, "false": False}[s.predict]
        self.planner = Planner(s.policy, profile=profile, peer_mode=s.peer_mode, predict=predict,
                               gpu_cost_weight=s.gpu_cost_weight, bounded=True,
                               admit=admits(s.policy, s.admit), **{k: getattr(s, k) for k in (
                                   "state_read", "predict_kinds", "predict_recurring",
                                   "predict_reuse", "replan_missing", "price_shares", "store_rank")})
        self.gpu = GpuPlacement(s.gpu_placement_budget_mb << 20, s.gpu_placement)
        self._published_rdds: set[int] = set()  # RDDs in the executors' table
        self._unsent: set[int] = set()  # RDDs of a publish that failed: sent with the next one
        self._unsent_stages: set[int] = set()  # stages of a publish that failed
        self._gone: set[int] = set()  # unpersisted RDDs: removed from the table by the next publish
        self._in_table: dict[int, int] = {}  # rdd -> its array's size in the JVM's table
        self._unplanned_jobs: list[tuple[int, float]] = []  # (job, start ms) not yet published
        self._finished_reads: OrderedDict[tuple[int, int], list[Block]] = OrderedDict()
        self._reported: set[tuple[int, int]] = set()  # tasks whose report came before their end

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self) -> "Brain":
        self.bridge.attach_brain()
        self._thread = threading.Thread(target=self._run, name="spark-lrc-brain", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        self.metrics.whole_replies = self.bridge.whole_replies()  # this thread drains
        while not self._stop.is_set():
            try:
                self.step(wait_ms=self._IDLE_WAIT_MS if not self._dirty else self._publish_due_in(),
                          linger_ms=self.settings.batch_ms)
                self._cpu_s = time.thread_time()  # this thread's CPU so far (the brain's cost)
                if time.monotonic() - self._last_metrics >= self._METRICS_EVERY_S:
                    self._check_dropped()
                    self.report_metrics()
            except Exception as e:  # py4j gone (JVM stopped) or a bug: never kill the app
                self._warn_once("loop", f"spark-lrc brain stopped draining events: {e!r}")
                if not self._stop.is_set():  # LRU now, not after the JVM's brainTimeoutMs
                    self._fall_back(f"the brain stopped: {e!r}")
                    try:
                        self.bridge.detach_brain()
                    except Exception:
                        pass  # the JVM's watchdog detaches it after spark.lrc.brainTimeoutMs
                return

    _METRICS_EVERY_S = 1.0  # the brain's counts reach Spark's metrics system (and drops) this often

    def _check_dropped(self) -> None:
        """Events the JVM dropped (its buffer was full) leave counts wrong: fall back to Spark's
        LRU at once, saying how to avoid it, and resynchronise once no job runs."""
        if self.degraded is not None and not self._resync_wanted:
            return  # fell back for another reason: LRU stays
        n = self.bridge.dropped() - self._dropped_seen
        if n > 0 and not self._resync_wanted:
            online = self.settings.profile is None
            self._fall_back(f"{n} events were dropped because the JVM's buffer was full (raise "
                            f"spark.lrc.bufferSize, now {self.settings.buffer_size}); reference "
                            f"counts would be wrong; "
                            + ("LRU until no job runs, then the brain rebuilds its state from "
                               "Spark's" if online else
                               "a profile's counts cannot be rebuilt: LRU from now on"))
            self.bridge.detach_brain()
            self._resync_wanted = online
        elif self._resync_wanted:
            self._resync()

    def _resync(self) -> None:
        """Start over from Spark's state at a cut when no job runs: a new planner, Spark's
        cached blocks, and every event after the cut (jobs that start later are whole)."""
        with self._consume, self._lock:
            cut = self.bridge.resync_cut()
            if cut is None:
                return  # jobs still run: their lost events cannot be rebuilt
            self._dropped_seen, block_lines = cut
            self._start_plans()
            self.degraded, self._resync_wanted = None, False
            for line in block_lines:
                self._handle(line)
            self.resyncs += 1
            self.bridge.attach_brain()
            self._dirty = True
        log.warning("spark-lrc: the brain rebuilt its state from Spark's (%d cached blocks) after "
                    "lost events; plans resume with the next job", len(block_lines))

    def report_metrics(self) -> None:
        """Hand the counts to the driver's metrics system (BrainMetrics gauges)."""
        self._last_metrics = time.monotonic()
        try:
            self.bridge.report_metrics(wire.encode_metrics(self.stats()))
        except Exception as e:
            self._warn_once("metrics", f"spark-lrc: the brain's metrics are not reported: {e!r}")

    _IDLE_WAIT_MS = 200  # longest block in the JVM: bounds how long close() waits for the thread

    def step(self, wait_ms: int = 0, force: bool = False, linger_ms: int = 0) -> int:
        """Drain one batch (waiting up to `wait_ms` for a first event, and within that until the
        oldest has waited `linger_ms` unless an urgent one comes: a job start, a task end under
        a count-based policy), apply it, and publish what changed: plans of new jobs at once,
        count changes at most every publishMs. Returns the number of events.

        One consumer at a time: a caller drains only after the previous batch has been applied,
        so events are applied in the order Spark emitted them, whichever thread calls."""
        with self._consume:
            lines = self.bridge.drain(wait_ms=max(0, int(wait_ms)), linger_ms=linger_ms)
            with self._lock, gc_paused():
                if lines:
                    self.batches += 1
                    self.events += len(lines)
                for line in lines:
                    self._handle(line)
                self._dirty = self._dirty or bool(lines)
                force = self.pace.update(time.monotonic()) or force  # (PublishPace.update)
                if self._dirty and (force or self._unplanned_jobs or self._publish_due_in() <= 0):
                    self._publish()
        return len(lines)

    def sync(self, max_batches: int = 1000) -> None:
        """Apply every event buffered so far, so that stats() and the table are current."""
        for _ in range(max_batches):
            if not self.step(force=True):
                return

    def _publish_due_in(self) -> float:
        """Milliseconds until count changes may be published again."""
        return self.pace.period_ms() - (time.monotonic() - self._last_publish) * 1000

    def close(self) -> dict[str, Any]:
        """Stop the thread, apply the last events, write stats/trace files. Idempotent.

        Called once the application has ended: the last events still count in the stats, and
        nothing is published any more (the driver plugin may already be gone)."""
        with self._lock:
            if self._closed:
                return self._final if self._final is not None else self.stats()
            self._closed = True
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        try:
            while self.step(force=True):
                pass
            self.bridge.detach_brain()
        except Exception as e:
            self._warn_once("close", f"spark-lrc: could not drain the last events: {e!r}")
        self._final = write_outputs(self.stats(), self.settings.stats_path,  # taken once: CPU
                                    self.recorder, self.settings.trace_path)  # counters move on
        return self._final

    # ---- events ----------------------------------------------------------------------------
    def _handle(self, line: str) -> None:
        try:
            ev = wire.decode_event(line)
            if type(ev) is wire.JobStart:
                self.metrics.job_start_chars.append(len(line))
                ev = self._resolve(ev)  # what it names by id filled in (the recorder's too)
            handler = self._handlers.get(type(ev))
            if handler is not None:
                handler(ev)
            if self.recorder is not None:
                self.recorder.event(ev)
        except Exception as e:
            self._warn_once(f"event:{line[:20]}", f"spark-lrc: ignored an event it could not apply "
                                                   f"({e!r}): {line[:200]}")

    def _planner_call(self, method: str, *args: Any) -> Any:
        if self.degraded:
            return None
        try:
            return getattr(self.planner, method)(*args)
        except Exception as e:
            self._fall_back(f"{method}{args!r} failed: {e!r}")
            return None

    def _job_start(self, ev: wire.JobStart) -> None:
        t0 = time.perf_counter()
        self.metrics.to_listener_ms.append(ev.received - ev.time)
        self.metrics.describe_ms.append(ev.sent - ev.received)
        self.metrics.to_brain_ms.append(time.time() * 1000 - ev.sent)
        described = self._job_stages
        # stages the planner saw complete are skipped: not built again (work per new stage)
        job, stages, rdds = job_from_event(ev, described, skip=self.planner.completed)
        self._unplanned_jobs.append((ev.job, float(ev.time)))
        self._planner_call("add_job", job, stages, rdds, True)  # fresh: built for this call
        self.gpu.job_started(job.id, stages)
        self.metrics.add_job_ms.append((time.perf_counter() - t0) * 1000)

    def _resolve(self, ev: wire.JobStart) -> wire.JobStart:
        """The job start with the stages and RDDs it names by id filled in from the memory
        (`self._job_stages`: all its stages); what the memory lacks (only after lost events)
        from the scheduler, while it still has it; else the job is planned without it."""
        full, self._job_stages, missing = self.stage_memory.resolve(ev)
        if missing:
            try:
                self.stage_memory.learn(wire.decode_stages(self.bridge.describe_stages(missing)))
            except Exception as e:
                self._warn_once("describe", f"spark-lrc: could not describe stages {missing}: {e!r}")
            full, self._job_stages, missing = self.stage_memory.resolve(ev)
            if missing:
                self._warn_once("unknown-stages", f"spark-lrc: job {ev.job} names stages "
                                f"{missing} no job start described; planned without them")
        return full

    def _stage_completed(self, ev: wire.StageCompleted) -> None:
        self._planner_call("stage_completed", ev.stage, ev.failed)
        self.gpu.stage_completed(ev.stage)

    def _job_end(self, ev: wire.JobEnd) -> None:
        self._planner_call("job_ended", ev.job)
        self._planner_call("forget_job", ev.job)  # state stays bounded by what is live
        self.gpu.job_ended(ev.job)

    def _unpersist(self, ev: wire.Unpersist) -> None:
        self._planner_call("rdd_unpersisted", ev.rdd)
        if ev.rdd in self._published_rdds:
            self._gone.add(ev.rdd)  # executors drop its priorities (their table stays bounded)

    def _task_end(self, ev: wire.TaskEnd) -> None:
        stage, part = ev.stage, ev.partition
        reported = (stage, part) in self._reported
        self._reported.discard((stage, part))
        if not ev.success:
            if ev.resubmitted:  # (Spark runs it again: its map output died with an executor)
                self._planner_call("task_resubmitted", stage, part)
            return
        # its executor's report may come after its end: keep what it was to read, till then
        if not reported:
            self._finished_reads[(stage, part)] = self._planned_reads(stage, part)
            while len(self._finished_reads) > 100_000:
                self._finished_reads.popitem(last=False)
        self.pace.emptied(self._planner_call("task_finished", stage, part, ev.duration_ms / 1000,
                                             self.cold_starts.task_ended(ev.executor),
                                             ev.executor),
                          self._in_memory_somewhere)  # (under pressure: published now)

    def _planned_reads(self, stage: int, part: int) -> list[Block]:
        known = self._finished_reads.pop((stage, part), None)
        if known is not None:
            return known
        try:
            return list(self.planner.task_reads(stage, part))
        except Exception:
            return []

    def _task_cache(self, ev: wire.TaskCache) -> None:
        stage, part = ev.stage, ev.partition
        if (stage, part) not in self._finished_reads and len(self._reported) < 100_000:
            self._reported.add((stage, part))  # its end is still to come
        reads, hits, puts = self._planned_reads(stage, part), set(blocks(ev.hits)), set(blocks(ev.puts))
        self.metrics.task(ev.executor, reads, hits, puts, blocks(ev.evicted),
                          self._in_memory_somewhere)
        st = self.planner.dag.stages.get(stage)
        self.gpu.task_read(ev.executor, st is not None and st.gpus > 0, stage, reads, hits, puts,
                           self.planner.locations, self.planner.refs.costs.size)
        self.metrics.eviction_reasons(ev.executor, stage, part, ev.evictions)
        self.metrics.executor_cpu(ev.executor, ev.hooks_cpu_ns, ev.watch_cpu_ns)
        if ev.evicted:
            self.pace.evicted(time.monotonic())

    def _in_memory_somewhere(self, block: Block) -> bool:
        return bool(self.planner.locations.get(block))

    def _block(self, ev: wire.BlockUpdate) -> None:
        b = blocks([ev.block])
        if not b:
            return
        executor, mem = ev.executor, ev.mem
        self.pace.pressure.block(executor, b[0], mem if in_memory(ev.level) else 0)
        if in_memory(ev.level) and mem > 0:
            self._planner_call("block_cached", b[0], executor, mem)
        else:
            self._planner_call("block_removed", b[0], executor)
            if ev.disk > 0:
                self._planner_call("on_disk", b[0])

    def _executor_added(self, ev: wire.ExecutorAdded) -> None:
        self.executors[ev.executor] = {"host": ev.host, "cores": ev.cores, "resources": ev.resources}

    def _executor_removed(self, ev: wire.ExecutorRemoved) -> None:
        self.executors.pop(ev.executor, None)
        self._planner_call("executor_removed", ev.executor)
        self.pace.pressure.executor_removed(ev.executor)

    # ---- tables ----------------------------------------------------------------------------
    def _publish(self) -> None:
        """Send the RDDs whose priorities changed and the stages newly planned, as one version."""
        self._dirty = False
        self._last_publish = time.monotonic()
        t0 = time.perf_counter()
        if self.degraded or self._closed:  # closed: the application ended, no executor evicts
            return
        try:
            changed = self.planner.take_changes()
            new_stages = self._unsent_stages.union(self.planner.take_planned())
            moves = self.gpu.update(self.planner, self.executors)
        except Exception as e:
            self._fall_back(f"planner failed: {e!r}")
            return
        parts: dict[int, set[int]] = defaultdict(set)
        if self.settings.policy != "lru":
            for r, p in changed:
                parts[r].add(p)
        for r in self._unsent | self._gone:  # a failed publish's RDDs go out whole
            parts.setdefault(r, set())
        self._gone = set()
        rdds = set(parts)
        if not rdds and not new_stages and moves is None:
            self._unplanned_jobs.clear()
            return
        arrays, sizes = self._encode(parts)
        self.version += 1
        try:
            self.bridge.publish(self.version, arrays, wire.encode_stages(new_stages), moves)
        except Exception as e:  # executors keep the table they have; the next publish retries
            self._warn_once("publish", f"spark-lrc: could not publish table version {self.version}: {e!r}")
            self.gpu.unsent()
            self._unsent = rdds
            self._unsent_stages = new_stages
            self._in_table = {}  # unknown what the JVM holds now: every RDD goes out whole
            self._dirty = True
            return
        self._unsent, self._unsent_stages = set(), set()
        for r, n in sizes.items():
            if n:
                self._in_table[r] = n
                self._published_rdds.add(r)
            else:  # removed from the table: nothing to remember
                self._in_table.pop(r, None)
                self._published_rdds.discard(r)
        for st in sorted(new_stages):
            self._published_stages[st] = None
        while len(self._published_stages) > PUBLISHED_STAGES:
            self._published_stages.popitem(last=False)
        if self._unplanned_jobs:
            self.metrics.publish_ms.append((time.perf_counter() - t0) * 1000)
        self.metrics.planned(self._unplanned_jobs, self.version, time.time() * 1000)
        self._unplanned_jobs.clear()

    def _encode(self, parts: dict[int, set[int]]) -> tuple[str, dict[int, int]]:
        """The table text for the changed partitions: only those of an RDD the JVM's table holds
        at its current size (work proportional to the changes), the whole array otherwise; and
        each RDD's size in the table after this publish (0: removed)."""
        full, partial, sizes = {}, {}, {}
        for r in sorted(parts):
            rdd = self.planner.dag.rdds.get(r)
            n = rdd.num_partitions if rdd is not None and rdd.cached else 0
            sizes[r] = n
            if n and self._in_table.get(r) == n and r not in self._unsent:
                partial[r] = {p: self.planner.priority((r, p)) for p in parts[r] if p < n}
            else:
                full[r] = self._priorities(r)
        text = ";".join(t for t in (wire.encode_arrays(full), wire.encode_updates(partial)) if t)
        return text, sizes

    def _priorities(self, rdd: int) -> list[float]:
        """Priority per partition of a cached RDD; none (removed from the table) otherwise."""
        r = self.planner.dag.rdds.get(rdd)
        n = r.num_partitions if r is not None and r.cached else 0
        return [self.planner.priority((rdd, p)) for p in range(n)]

    def _fall_back(self, why: str) -> None:
        """Clear every published priority so executors evict in Spark's LRU order again."""
        if self.degraded:
            return
        self.degraded = self.last_fallback = why
        log.warning("spark-lrc: falling back to Spark's LRU: %s", why)
        try:
            self.version += 1
            self.bridge.publish(self.version,
                                wire.encode_arrays({r: () for r in sorted(self._published_rdds)}),
                                wire.encode_stages(self._published_stages),
                                self.gpu.withdrawal())  # and every placement move
        except Exception as e:
            log.warning("spark-lrc: could not clear the priority table: %r", e)

    # ---- outputs ---------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        with self._lock:
            dropped = None
            try:
                dropped = self.bridge.dropped()
            except Exception:
                pass
            gpu_stages = self.gpu.moves or self.gpu.reads or self.gpu.moved
            extra = {"placement": self.gpu.stats()} if gpu_stages else {}  # GPU stages only
            return self.metrics.snapshot(
                table_version=self.version, degraded=self.degraded, dropped_events=dropped,
                last_fallback=self.last_fallback, resyncs=self.resyncs,
                peer_mode=self.settings.peer_mode, profile=self.settings.profile,
                brain_cpu_s=round(self._cpu_s, 3), events=self.events, event_batches=self.batches,
                plugin_cpu_s=self.metrics.plugin_cpu(self.bridge.plugin_cpu(), self._cpu_s),
                negative_decrements=self.planner.refs.negative_decrements,
                gpus=gpus_of(self.executors), foreseen=dict(self.planner.foreseen), **extra,
                memory_pressure=self.pace.stats())

    def post_summary(self) -> None:
        """Put the stats into Spark's event log (a `SummaryEvent`), where the History Server and
        `python -m spark_plugin report EVENT_LOG` find them; while the application still runs
        (Spark stops its event log with the context)."""
        try:
            if not self._closed:
                self.sync()
            self.report_metrics()
            self.bridge.post_summary(json.dumps(self.stats(), sort_keys=True))
        except Exception as e:
            self._warn_once("summary", f"spark-lrc: stats not written to the event log: {e!r}")

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning(message)

