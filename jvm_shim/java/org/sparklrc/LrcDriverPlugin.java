package org.sparklrc;

import java.util.Collections;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.PluginContext;

/**
 * Driver half: registers the listener, owns the table store and its endpoint (TableEndpoint:
 * executors' table requests, answered by push), turns executors' sends into events, hands the
 * {@code spark.lrc.*} settings to executors (see Settings) and, for a driver that is not PySpark,
 * runs the brain as a child process (Sidecar).
 * Never throws out of a plugin callback.
 */
public final class LrcDriverPlugin implements DriverPlugin {
  static final String NO_BRAIN_MSG =
      "spark-lrc: no policy brain attached; Spark's LRU stays in effect";
  static final String EVENT_PREFIX = "lrc:event|";

  /** State of the application running in this JVM (null when no driver plugin is loaded). */
  private static volatile LrcDriverPlugin current;
  private static final AtomicBoolean NO_BRAIN_LOGGED = new AtomicBoolean(false);

  final TableStore tables = new TableStore();
  private volatile TableEndpoint endpoint;
  volatile SparkContext sc;
  /** The brain's counts in the driver's metrics system (null if registering failed). */
  volatile BrainMetrics metrics;
  /** The brain's child process when the driver is not PySpark (null otherwise). */
  volatile Sidecar sidecar;
  /** LRU when the brain stops taking events (null if it could not start). */
  private volatile BrainWatchdog watchdog;

  static LrcDriverPlugin current() {
    return current;
  }

  @Override
  public Map<String, String> init(SparkContext sc, PluginContext ctx) {
    Map<String, String> forExecutors = Collections.emptyMap();
    try {
      Settings settings = Settings.fromConf(sc.conf());
      forExecutors = settings.asMap();
      this.sc = sc;
      EventBuffer.reset((int) settings.getLong(Settings.BUFFER_SIZE),
          settings.taskEndsUrgent());
      Lineage.resetCache();
      PluginCpu.reset();
      NO_BRAIN_LOGGED.set(false);
      LrcLog.reset();
      current = this;
      try {
        metrics = new BrainMetrics(ctx.metricRegistry());
      } catch (Throwable t) {
        LrcLog.warnOnce("driver.metrics", "spark-lrc: the brain's metrics are off", t);
      }
      endpoint = TableEndpoint.start(sc.env().rpcEnv(), tables);
      if (!Settings.listenerConfigured(sc.conf())) { // else spark.extraListeners already has one
        sc.addSparkListener(new LrcListener(sc));
      }
      watchdog = BrainWatchdog.start(tables, settings.getLong(Settings.BRAIN_TIMEOUT_MS));
      sidecar = Sidecar.startIfWanted(sc, settings, tables);
    } catch (Throwable t) {
      LrcLog.warnOnce("driver.init", "spark-lrc: driver plugin failed to start; Spark's LRU stays"
          + " in effect", t);
    }
    return forExecutors; // Spark hands this map to every ExecutorPlugin.init
  }

  /** Called by the listener at each job start: the one-line notice when no brain is attached. */
  static void noteJobStart() {
    LrcDriverPlugin p = current;
    if (p != null && !p.tables.brainAttached() && NO_BRAIN_LOGGED.compareAndSet(false, true)) {
      LrcLog.warn(NO_BRAIN_MSG);
    }
  }

  @Override
  public Object receive(Object message) {
    long cpu = PluginCpu.start();
    try {
      if (message instanceof String) {
        String m = (String) message;
        if (m.startsWith(EVENT_PREFIX)) {
          EventBuffer.add(m.substring(EVENT_PREFIX.length()));
          return null; // one-way message: no reply
        }
      }
    } catch (Throwable t) {
      LrcLog.warnOnce("driver.receive", "spark-lrc: bad message from an executor", t);
    } finally {
      PluginCpu.add(PluginCpu.Part.EXECUTOR_EVENTS, cpu);
    }
    return "";
  }

  @Override
  public void shutdown() {
    try {
      Sidecar s = sidecar;
      if (s != null) {
        s.stop(sc);
        sidecar = null;
      }
      tables.detachBrain();
      BrainWatchdog w = watchdog;
      if (w != null) {
        w.close();
        watchdog = null;
      }
      TableEndpoint e = endpoint;
      if (e != null) {
        e.close();
      }
      if (current == this) {
        current = null;
      }
    } catch (Throwable t) {
      // never fail shutdown
    }
  }
}
