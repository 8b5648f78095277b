"""One consumer drains the shim's event buffer: a second caller of Brain.step() cannot drain a
batch while an earlier batch is still waiting to be applied (no JVM: the bridge hands out
numbered batches and counts the drains)."""
from __future__ import annotations

import json
import threading
import time

from spark_plugin.brain import Brain
from spark_plugin.config import LrcSettings


class CountingBridge:
    """The JvmBridge surface the brain uses; each drain hands out one executor_added event."""

    def __init__(self):
        self.drains = 0
        self._mutex = threading.Lock()

    def drain(self, max_events: int = 10_000, wait_ms: int = 0, linger_ms: int = 0) -> list[str]:
        with self._mutex:
            self.drains += 1
            n = self.drains
        return [json.dumps({"e": "executor_added", "executor": str(n), "host": "h", "cores": 1,
                            "resources": {}})]

    def publish(self, version: int, arrays: str, stages: str, moves: str | None = None) -> None: ...
    def attach_brain(self) -> None: ...
    def detach_brain(self) -> None: ...
    def task_ends_urgent(self, urgent: bool) -> None: ...
    def dropped(self) -> int: return 0
    def plugin_cpu(self) -> dict: return {}


def test_a_second_step_waits_until_the_first_batch_is_applied():
    bridge = CountingBridge()
    b = Brain(bridge, LrcSettings.from_conf({}, policy="lrc"))
    with b._lock:  # hold the state lock: the first step drains, then must wait to apply
        first = threading.Thread(target=b.step)
        first.start()
        deadline = time.monotonic() + 5
        while bridge.drains < 1 and time.monotonic() < deadline:
            time.sleep(0.005)
        second = threading.Thread(target=b.step)
        second.start()
        second.join(timeout=0.3)
        # The second caller must not have drained: its batch would be applied before the first.
        assert bridge.drains == 1
    first.join(timeout=5)
    second.join(timeout=5)
    assert bridge.drains == 2
    assert list(b.executors) == ["1", "2"]  # applied in the order they were drained


def test_sync_applies_everything_buffered():
    class Finite(CountingBridge):
        def drain(self, max_events: int = 10_000, wait_ms: int = 0, linger_ms: int = 0) -> list[str]:
            return super().drain() if self.drains < 5 else []

    bridge = Finite()
    b = Brain(bridge, LrcSettings.from_conf({}, policy="lrc"))
    b.sync()
    assert sorted(b.executors, key=int) == ["1", "2", "3", "4", "5"]
