"""How soon the brain publishes count changes: at once while an executor's cache is under memory
pressure, at most every `RELAXED_PUBLISH_MS` while none is.

A table decides nothing until an executor must evict: eviction order and admission both act
only when a store does not fit. Without pressure, a count-based policy's publish after every
task end (a py4j call, a push to every executor and a `table_applied` back: about 2,000 a run
on MLlib, most of what crd costs over lru) buys nothing. So while no executor is under pressure
the brain publishes count changes at most every `RELAXED_PUBLISH_MS`, and task ends wait in the
JVM's buffer like other events (`LrcBridge.taskEndsUrgent`). Plans of new jobs still go out at
once. When pressure begins, what waited is published at once.

Pressure is judged from Spark's own reports, conservatively: an executor holding cached blocks
of at least `FULL_SHARE` of its unified memory (`block_manager`: storage and execution, which
borrow from each other), an executor with cached blocks whose unified memory is not known, or an
eviction reported by any executor in the last `EVICTED_RECENTLY_S` (execution memory can take
storage's place below the share). Blocks fill the cache before anything is evicted, so the switch
comes while the executor still has room.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Hashable

log = logging.getLogger("spark_lrc")
FULL_SHARE = 0.5  # cached bytes / unified memory at which an executor counts as under pressure
EVICTED_RECENTLY_S = 30.0  # an eviction keeps the brain in the pressure mode this long
RELAXED_PUBLISH_MS = 1000  # count changes' publish period while no executor is under pressure


class MemoryPressure:
    """Cached bytes and unified memory per executor, and the time of the last eviction."""

    def __init__(self) -> None:
        self._unified: dict[str, int] = {}  # executor -> unified memory (bytes)
        self._cached: dict[str, int] = {}  # executor -> bytes of cached blocks in its memory
        self._blocks: dict[tuple[str, Hashable], int] = {}  # (executor, block) -> bytes
        self._evicted_at = float("-inf")  # monotonic seconds

    # fed by the brain's handlers of the events that say what is cached where and how much
    # memory there is (no second dispatch of every event)
    def block(self, executor: str, block: Hashable, mem: int) -> None:
        """The block's bytes in the executor's memory now (0: in none of it)."""
        old = self._blocks.pop((executor, block), 0)
        if mem > 0:
            self._blocks[(executor, block)] = mem
        self._cached[executor] = self._cached.get(executor, 0) - old + max(mem, 0)

    def unified(self, executor: str, mem: int) -> None:
        self._unified[executor] = mem

    def evicted(self, now_s: float) -> None:
        self._evicted_at = now_s

    def executor_removed(self, executor: str) -> None:
        self._unified.pop(executor, None)
        self._cached.pop(executor, None)
        for key in [k for k in self._blocks if k[0] == executor]:
            del self._blocks[key]

    def on(self, now_s: float) -> bool:
        return now_s - self._evicted_at < EVICTED_RECENTLY_S or any(
            n > 0 and (e not in self._unified or n >= FULL_SHARE * self._unified[e])
            for e, n in self._cached.items())


class PublishPace:
    """The count-change publish period and the JVM's task-end urgency, following the pressure.

    `publish_ms`: spark.lrc.publishMs, the period under pressure. The JVM starts with task ends
    urgent under a count-based policy with publishMs 0 (`Settings#taskEndsUrgent`); only then
    does the urgency follow the pressure, through `bridge.task_ends_urgent`.

    Under pressure a task end that leaves a cached block with no read to come does not wait for
    the period: that block is now every policy's first victim, and until the table says so an
    executor evicts blocks that are still to be read in its place (`emptied`, `update`)."""

    def __init__(self, publish_ms: int, policy: str, bridge: Any):
        self.pressure = MemoryPressure()
        self._publish_ms = publish_ms
        self._counts = policy != "lru"
        self._follow = self._urgent = self._counts and publish_ms == 0
        self._emptied = False  # a cached block lost its last read since the last update
        self._bridge = bridge
        self.on: bool | None = None  # not judged yet: as under pressure
        self.switches = 0  # changes of judgement (stats)
        # executor reports with evictions received while judged without pressure: evictions
        # decided with count changes up to RELAXED_PUBLISH_MS old (stats; 0 when the judgement
        # comes in time)
        self.evicting_unpressed = 0

    def evicted(self, now_s: float) -> None:
        """An executor reported evictions."""
        self.evicting_unpressed += self.on is False
        self.pressure.evicted(now_s)

    def stats(self) -> dict[str, Any]:
        return {"on": self.on, "switches": self.switches,
                "evicting_unpressed": self.evicting_unpressed}

    def period_ms(self) -> float:
        return self._publish_ms if self.on is not False else max(self._publish_ms,
                                                                 RELAXED_PUBLISH_MS)

    def emptied(self, blocks: list | None, in_memory: Callable[[Hashable], bool]) -> None:
        """A task end left ``blocks`` with no read to come (`Planner.task_finished`); those
        ``in_memory`` somewhere are what an executor can evict."""
        if blocks and self._counts and not self._emptied:
            self._emptied = any(map(in_memory, blocks))

    def update(self, now_s: float) -> bool:
        """Judges the pressure now; True when what waited must be published now: pressure has
        just begun, or under it a cached block has lost its last read."""
        on = self.pressure.on(now_s)
        due = on and (self.on is False or self._emptied)
        self._emptied = False
        self.switches += self.on is not None and on != self.on
        self.on = on
        if self._follow and on != self._urgent:
            try:
                self._bridge.task_ends_urgent(on)
                self._urgent = on
            except Exception as e:  # task ends stay as they are: costlier, never wrong
                self._follow = False
                log.warning("spark-lrc: could not change whether task ends wake the brain: %r", e)
        return due
