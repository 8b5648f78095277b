"""The one py4j handle to the JVM shim's static `org.sparklrc.LrcBridge` on the driver.

Every call crosses py4j once and carries strings, never Scala collections (see docs/DESIGN.md §3):
event lines and table text, in the formats `spark_plugin/wire.py` defines.
"""
from __future__ import annotations

import json
import threading
from typing import Any

from .config import PLUGIN_CLASS


PIECE = "\x01"  # EventBuffer.PIECE: a reply holding only the first part of a longer line


def drain_lines(drain: Any, max_events: int, wait_ms: int = 0) -> list[str]:
    """Event lines from `LrcBridge.drain*` (`drain(max, wait_ms)` calls it). The JVM keeps each
    reply short (EventBuffer.MAX_REPLY_CHARS: py4j sends a longer one 40 ms late) and returns a
    longer line in pieces, which are joined here."""
    text = drain(max_events, wait_ms)
    lines = text.split("\n") if text else []  # not splitlines(): JSON may hold U+2028 etc.
    while lines and lines[-1].startswith(PIECE):
        head = lines.pop()[1:]
        more = drain(max_events, 0)
        rest = more.split("\n") if more else [""]
        first = rest[0]
        rest[0] = PIECE + head + first[1:] if first.startswith(PIECE) else head + first
        lines.extend(rest)
    return lines


class Members:
    """A py4j class or object whose members are looked up once each, and called without py4j's
    argument converters. py4j resolves `JavaClass.name` with a reflection round trip to the JVM on
    every access, so `cls.drain(...)` cost two round trips; a member, once resolved, serves later
    calls (each still on the calling thread's own connection). The bridge passes only strings,
    numbers, booleans and py4j objects, which py4j's protocol carries as they are, yet every
    argument was checked against each converter PySpark registers (collections, datetimes;
    `inspect.getattr_static` calls). Measured on MLlib under crd (cProfile of the brain thread):
    half of its 7,097 py4j commands per run were lookups; without the converter checks as well,
    its CPU fell from 3.06 to 2.45 s (results/overhead/session40/)."""

    def __init__(self, handle: Any):
        self._handle = handle

    def __getattr__(self, name: str) -> Any:  # only for names not yet resolved
        if name.startswith("__"):
            raise AttributeError(name)
        member = getattr(self._handle, name)
        if hasattr(member, "converters"):  # a py4j JavaMember: its calls skip the converters
            member.converters = None
        setattr(self, name, member)
        return member


class ShimNotLoaded(RuntimeError):
    """The JVM half of spark-lrc is not in this SparkContext."""


class JvmBridge:
    """Typed wrapper around `org.sparklrc.LrcBridge`: its class (in a PySpark driver) or the
    instance a sidecar's gateway serves as entry point (the same static methods). `server`: the
    py4j gateway's server object (`JavaGateway.java_gateway_server`), for `whole_replies`."""

    def __init__(self, handle: Any, server: Any = None):
        self._j = Members(handle)
        self._server = server
        self._whole = threading.local()  # py4j connections are per thread: so is their setting

    @classmethod
    def for_context(cls, sc: Any) -> "JvmBridge":
        """The bridge of a PySpark SparkContext; ShimNotLoaded if the shim is not in it."""
        handle = sc._jvm.org.sparklrc.LrcBridge
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
        return cls(handle, sc._gateway.java_gateway_server)

    def spark_conf(self) -> dict[str, str]:
        """The application's `spark.*` confs as the driver JVM holds them."""
        return json.loads(self._j.sparkConf() or "{}")

    def sidecar_running(self) -> bool:
        """A sidecar brain (a child process of the driver JVM) owns this application's tables."""
        return bool(self._j.sidecarRunning())

    def drain(self, max_events: int = 10_000, wait_ms: int = 0, linger_ms: int = 0) -> list[str]:
        """Buffered events; with `wait_ms`, block up to that long in the JVM while none arrived,
        and within it until the oldest has waited `linger_ms` (urgent events end that at once:
        see `spark.lrc.batchMs`)."""
        whole = getattr(self._whole, "on", False)
        return drain_lines(lambda n, w: self._j.drainWait(n, w, linger_ms, whole),
                           max_events, wait_ms)

    def whole_replies(self) -> bool:
        """Sets TCP_NODELAY on this thread's py4j connection, so that its drains return a long
        job start in one reply instead of pieces of 7,000 characters, one round trip each
        (`NoDelay.java`). False where the gateway does not allow it: drains stay in pieces."""
        try:
            self._whole.on = self._server is not None and bool(self._j.noDelay(self._server))
        except Exception:  # an older gateway, or none: pieces are always right
            self._whole.on = False
        return self._whole.on

    def describe_stages(self, stage_ids: list[int]) -> str:
        """`{"stages": [...]}` for these stages from the scheduler's live ones, or "" when it
        cannot describe every one (`wire.decode_stages` reads it)."""
        return self._j.describeStages(",".join(map(str, stage_ids))) or ""

    def plugin_cpu(self) -> dict[str, int]:
        """The plugin's CPU ns in the driver JVM by part (org.sparklrc.PluginCpu); {} if the JVM
        cannot say (an older shim, the JVM gone): a figure for the report, never an error."""
        try:
            return {k: int(v) for k, v in (item.split("=") for item in
                                            str(self._j.pluginCpu()).split(",") if item)}
        except Exception:
            return {}

    def dropped(self) -> int:
        return int(self._j.dropped())

    def resync_cut(self) -> tuple[int, list[str]] | None:
        """None while a job runs; else the buffer is emptied and this returns the drop count at
        that cut and Spark's cached RDD blocks then, as block event lines."""
        text = self._j.resyncCut()
        if text is None:
            return None
        dropped, *lines = text.split("\n")
        return int(dropped), lines

    def attach_brain(self) -> None:
        self._j.attachBrain()

    def detach_brain(self) -> None:
        self._j.detachBrain()

    def task_ends_urgent(self, urgent: bool) -> None:
        """Whether task ends wake the brain's lingering drain at once (spark_plugin.pressure)."""
        self._j.taskEndsUrgent(bool(urgent))

    def report_metrics(self, lines: str) -> None:
        self._j.reportMetrics(lines)

    def post_summary(self, stats_json: str) -> None:
        self._j.postSummary(stats_json)

    def publish(self, version: int, rdd_arrays: str, planned_stages: str,
                moves: str | None = None) -> None:
        """A table version; `moves` (GPU placement, None: unchanged) goes with it."""
        if moves is None:
            self._j.publish(version, rdd_arrays, planned_stages)
        else:
            self._j.publish(version, rdd_arrays, planned_stages, moves)


def plugin_configured(conf_plugins: str | None) -> bool:
    return PLUGIN_CLASS in [p.strip() for p in (conf_plugins or "").split(",")]
