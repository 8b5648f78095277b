"""The one py4j handle to the JVM shim's static `org.sparklrc.LrcBridge` on the driver.

Every call crosses py4j once and carries strings, never Scala collections (see docs/DESIGN.md §3):
event lines and table text, in the formats `spark_plugin/wire.py` defines.
"""
from __future__ import annotations

from typing import Any

from .config import PLUGIN_CLASS


class ShimNotLoaded(RuntimeError):
    """The JVM half of spark-lrc is not in this SparkContext."""


class JvmBridge:
    """Typed wrapper around `org.sparklrc.LrcBridge` (a class with static methods only)."""

    def __init__(self, sc: Any):
        jvm = sc._jvm
        handle = jvm.org.sparklrc.LrcBridge
        # py4j returns a JavaPackage (not a JavaClass) for a class it cannot load.
        if type(handle).__name__ != "JavaClass":
            raise ShimNotLoaded(
                "org.sparklrc.LrcBridge is not on the driver's classpath: start the session with "
                f"spark.plugins={PLUGIN_CLASS} and the shim jar on spark.jars "
                "(spark_plugin.configure(builder) or spark-lrc-submit do both)")
        if not handle.active():
            raise ShimNotLoaded(
                f"the shim jar is on the classpath but {PLUGIN_CLASS} is not loaded: "
                f"add it to spark.plugins before the session starts")
        self._j = handle

    def drain(self, max_events: int = 10_000, wait_ms: int = 0) -> list[str]:
        """Buffered events; with `wait_ms`, block that long in the JVM while none arrived."""
        text = self._j.drainWait(max_events, wait_ms) if wait_ms else self._j.drain(max_events)
        return text.splitlines() if text else []

    def dropped(self) -> int:
        return int(self._j.dropped())

    def attach_brain(self) -> None:
        self._j.attachBrain()

    def detach_brain(self) -> None:
        self._j.detachBrain()

    def publish(self, version: int, rdd_arrays: str, planned_stages: str) -> None:
        self._j.publish(version, rdd_arrays, planned_stages)


def plugin_configured(conf_plugins: str | None) -> bool:
    return PLUGIN_CLASS in [p.strip() for p in (conf_plugins or "").split(",")]
