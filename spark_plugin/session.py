"""Turning spark-lrc on for a session: configure a builder, attach the brain, read its stats.

Spark loads plugins only when a SparkContext starts, so the JVM half must be configured before
the session exists (`configure`); the Python half (the brain) attaches to a running context
(`attach`). `enable` does whichever is possible and says what to do otherwise.
"""
from __future__ import annotations

import atexit
import logging
import weakref
from typing import Any

from . import pyspark_hooks
from .bridge import JvmBridge, ShimNotLoaded, plugin_configured
from .brain import Brain
from .config import PLUGIN_CLASS, LrcConfigError, LrcSettings
from .profile_check import check_profile

log = logging.getLogger("spark_lrc")
# The brain of each running SparkContext. Held weakly, and forgotten as soon as its context stops.
_brains: weakref.WeakKeyDictionary[Any, Brain] = weakref.WeakKeyDictionary()
_last_stats: dict[str, Any] | None = None  # the final stats of the brain that closed last


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
    existing = pyspark_hooks.builder_options(builder)
    settings = LrcSettings.from_conf(existing, **options)
    check_profile(settings)  # a named profile that cannot load fails here, not in the brain
    for key, value in shim_confs(settings, existing).items():
        builder = builder.config(key, value)
    install_context_hook()
    return builder


def attach(sc: Any, **options: Any) -> Brain:
    """Start the brain for a running SparkContext whose JVM shim is loaded (idempotent)."""
    brain = _brains.get(sc)
    if brain is not None:
        return brain
    settings = LrcSettings.from_conf(dict(sc.getConf().getAll()), **options)
    bridge = JvmBridge.for_context(sc)
    if bridge.sidecar_running():
        raise LrcConfigError(
            "this application's brain already runs as a sidecar process of the driver JVM "
            "(spark.lrc.sidecar); its stats go to spark.lrc.statsPath")
    brain = Brain(bridge, settings).start()
    _brains[sc] = brain
    pyspark_hooks.around_context_stop(sc, before=brain.post_summary, after=lambda: _close(sc))
    log.info("spark-lrc: brain attached (policy %s)", settings.policy)
    return brain


def enable(spark: Any, **options: Any) -> Any:
    """Turn spark-lrc on. Given a `SparkSession.Builder`: configures it (see `configure`) and
    returns it. Given a running SparkSession or SparkContext: attaches the brain and returns it;
    if the session was started without the JVM shim, raises LrcConfigError naming the confs
    to set before the session starts."""
    if pyspark_hooks.is_builder(spark):
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
    """Hits, misses, effective hits, ratios, evictions per executor and RDD, plan latency.

    For a given session or context: its brain's, live. Without one: the running brain's, or once
    the application has stopped, the final stats its brain wrote when it closed."""
    if spark is not None:
        brain = _brains.get(getattr(spark, "sparkContext", spark))
    else:
        brain = active_brain()
        if brain is None and _last_stats is not None:
            return _last_stats
    if brain is None:
        raise LrcConfigError("spark-lrc is not attached to any running SparkContext")
    return brain.stats()


def active_brain() -> Brain | None:
    """The brain of the most recently started SparkContext that is still running."""
    live = list(_brains.values())
    return live[-1] if live else None


def _close(sc: Any) -> None:
    """Flush the brain of `sc` (last events, stats and trace files) and forget it."""
    global _last_stats
    brain = _brains.pop(sc, None)
    if brain is not None:
        _last_stats = brain.close()


@atexit.register
def _close_all() -> None:
    """Applications that never call stop() still get their stats and trace files."""
    for sc in list(_brains.keys()):
        _close(sc)


def install_context_hook() -> None:
    """After any SparkContext starts with the shim's plugin configured, attach the brain.

    This is how an unmodified application gets the brain (`spark-lrc-submit`), and how a
    builder configured with `configure` gets it without a second call. A failure to attach is
    logged and the application goes on with Spark's LRU.
    """
    pyspark_hooks.after_context_init(_attach_if_configured)


def _attach_if_configured(sc: Any) -> None:
    try:
        conf = dict(sc.getConf().getAll())
        settings = LrcSettings.from_conf(conf)
        if plugin_configured(conf.get("spark.plugins")) and settings.brain and settings.sidecar != "true":
            attach(sc)
    except Exception as e:
        log.warning("spark-lrc: brain not attached, Spark's LRU stays in effect: %s", e)
