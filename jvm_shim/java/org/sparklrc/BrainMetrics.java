package org.sparklrc;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The brain's counts in the driver's metrics system: what only the plan can tell (misses and
 * effective hits are measured against the reads the driver's DAG expected of each task; see
 * CacheMetrics for what executors count themselves). Gauges in the driver plugin's registry
 * (source {@code plugin.org.sparklrc.LrcPlugin} of the driver instance): {@code brain.<count>}
 * for the application and {@code brain.executor.<id>.<count>} per executor, counts being hits,
 * misses, effectiveHits, evictions and tasks. The brain reports them as {@code name=value} lines
 * (spark_plugin/wire.py {@code encode_metrics}) about once a second and as the application
 * stops. Totals are registered at init (Spark keeps a plugin's source only if it has metrics
 * then); per-executor gauges as executors appear.
 */
final class BrainMetrics {
  static final String[] TOTALS = {"hits", "misses", "effectiveHits", "evictions", "tasks"};

  private final MetricRegistry registry;
  private final ConcurrentHashMap<String, Long> values = new ConcurrentHashMap<>();

  BrainMetrics(MetricRegistry registry) {
    this.registry = registry;
    for (String name : TOTALS) {
      gauge("brain." + name);
    }
  }

  private void gauge(String name) {
    values.putIfAbsent(name, 0L);
    if (!registry.getNames().contains(name)) {
      registry.register(name, (Gauge<Long>) () -> values.getOrDefault(name, 0L));
    }
  }

  /** Applies {@code name=value} lines; names outside {@code brain.} or malformed lines are
   * ignored (the values come from our own brain; nothing here may fail the driver). */
  void update(String text) {
    for (String line : text.split("\n")) {
      int eq = line.indexOf('=');
      if (eq <= 0 || !line.startsWith("brain.")) {
        continue;
      }
      String name = line.substring(0, eq);
      try {
        long v = Long.parseLong(line.substring(eq + 1).trim());
        if (!values.containsKey(name)) {
          gauge(name);
        }
        values.put(name, v);
      } catch (RuntimeException e) {
        LrcLog.warnOnce("brain.metrics", "spark-lrc: ignored a malformed metric line: " + line,
            null);
      }
    }
  }
}
