"""Turning spark-lrc on for a session: configure a builder, attach the brain, read its stats.

Spark loads plugins only when a SparkContext starts, so the JVM half must be configured before
the session exists (`configure`); the Python half (the brain) attaches to a running context
(`attach`). `enable` does whichever is possible and says what to do otherwise.
"""
from __future__ import annotations

import atexit
import functools
import logging
from typing import Any

from .bridge import JvmBridge, ShimNotLoaded, plugin_configured
from .brain import Brain
from .config import PLUGIN_CLASS, LrcConfigError, LrcSettings

log = logging.getLogger("spark_lrc")
_brains: dict[int, Brain] = {}  # id(SparkContext) -> its brain


def shim_confs(settings: LrcSettings, existing: dict[str, str] | None = None) -> dict[str, str]:
    """The Spark confs that load the JVM shim (merged with existing plugins/jars) plus spark.lrc.*."""
    from jvm_shim import jar_path

    existing = existing or {}
    jar = str(jar_path(build=True))
    plugins = [p for p in (existing.get("spark.plugins") or "").split(",") if p.strip()]
    jars = [j for j in (existing.get("spark.jars") or "").split(",") if j.strip()]
    return {
        "spark.plugins": ",".join(plugins + ([PLUGIN_CLASS] if PLUGIN_CLASS not in plugins else [])),
        "spark.jars": ",".join(jars + ([jar] if jar not in jars else [])),
        **settings.as_spark_conf(),
    }


def configure(builder: Any, **options: Any) -> Any:
    """Set on a `SparkSession.Builder` everything spark-lrc needs; the brain attaches by itself
    when the session starts. Returns the builder, so `configure(SparkSession.builder).getOrCreate()`.
    Options are the `spark.lrc.*` keys as keywords (`policy="lerc"`, `trace_path=...`)."""
    existing = dict(builder._options)
    settings = LrcSettings.from_conf(existing, **options)
    for key, value in shim_confs(settings, existing).items():
        builder = builder.config(key, value)
    install_context_hook()
    return builder


def attach(sc: Any, **options: Any) -> Brain:
    """Start the brain for a running SparkContext whose JVM shim is loaded (idempotent)."""
    brain = _brains.get(id(sc))
    if brain is not None:
        return brain
    settings = LrcSettings.from_conf(dict(sc.getConf().getAll()), **options)
    brain = Brain(JvmBridge(sc), settings).start()
    _brains[id(sc)] = brain
    _close_before_stop(sc, brain)
    log.info("spark-lrc: brain attached (policy %s)", settings.policy)
    return brain


def enable(spark: Any, **options: Any) -> Any:
    """Turn spark-lrc on. Given a `SparkSession.Builder`: configures it (see `configure`) and
    returns it. Given a running SparkSession or SparkContext: attaches the brain and returns it;
    if the session was started without the JVM shim, raises LrcConfigError naming the confs
    to set before the session starts."""
    if hasattr(spark, "_options") and hasattr(spark, "getOrCreate"):
        return configure(spark, **options)
    sc = getattr(spark, "sparkContext", spark)
    try:
        return attach(sc, **options)
    except ShimNotLoaded as e:
        settings = LrcSettings.from_conf({}, **options)
        confs = " ".join(f"--conf {k}={v}" for k, v in shim_confs(settings).items())
        raise LrcConfigError(
            f"spark-lrc cannot turn on in a session that is already running without its JVM shim "
            f"({e}). Start the session with spark_plugin.configure(SparkSession.builder, ...) or "
            f"with: {confs}") from None


def stats(spark: Any = None) -> dict[str, Any]:
    """Hits, misses, effective hits, ratios, evictions per executor and RDD, plan latency."""
    brain = _brains.get(id(getattr(spark, "sparkContext", spark))) if spark is not None else active_brain()
    if brain is None:
        raise LrcConfigError("spark-lrc is not attached to any running SparkContext")
    return brain.stats()


def active_brain() -> Brain | None:
    return next(reversed(_brains.values()), None) if _brains else None


def _close_before_stop(sc: Any, brain: Brain) -> None:
    """Flush the brain (last events, stats and trace files) before the context stops, and at
    interpreter exit for applications that never call stop()."""
    stop = sc.stop

    @functools.wraps(stop)
    def stop_with_flush(*args: Any, **kwargs: Any) -> Any:
        try:
            result = stop(*args, **kwargs)  # the listener sees application end first
        finally:
            brain.close()
        return result

    sc.stop = stop_with_flush
    atexit.register(brain.close)


_hook_installed = False


def install_context_hook() -> None:
    """After any SparkContext starts with the shim's plugin configured, attach the brain.

    This is how an unmodified application gets the brain (`spark-lrc-submit`), and how a
    builder configured with `configure` gets it without a second call. A failure to attach is
    logged and the application goes on with Spark's LRU.
    """
    global _hook_installed
    if _hook_installed:
        return
    from pyspark import SparkContext

    original = SparkContext._do_init

    @functools.wraps(original)
    def do_init_then_attach(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        try:
            conf = dict(self.getConf().getAll())
            if plugin_configured(conf.get("spark.plugins")) and LrcSettings.from_conf(conf).brain:
                attach(self)
        except Exception as e:
            log.warning("spark-lrc: brain not attached, Spark's LRU stays in effect: %s", e)
        return result

    SparkContext._do_init = do_init_then_attach
    _hook_installed = True
