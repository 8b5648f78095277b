package org.sparklrc;

import com.codahale.metrics.Counter;
import com.codahale.metrics.MetricRegistry;
import org.apache.spark.api.plugin.PluginContext;

/**
 * This executor's cache counters in Spark's own metrics system, so that they reach whatever sinks
 * the user configured (JMX, CSV, the Prometheus servlet, ...) with or without the Python brain.
 * They live in the plugin's {@code PluginContext.metricRegistry()}, which Spark registers as the
 * source {@code plugin.org.sparklrc.LrcPlugin} of the executor instance: full names
 * {@code <app id>.<executor id>.plugin.org.sparklrc.LrcPlugin.<counter>}. Spark takes the source
 * only if it has metrics when init returns, so they are registered there (only when the ordered
 * map is installed: no counters on an executor means the plugin is not active there).
 *
 * <p>Every counter is advanced from the per-task report that becomes the task's {@code task_cache}
 * event, just before that event is sent: each equals the sum over this executor's events, and the
 * brain's per-executor numbers in {@code stats()["executors"][id]} where it has them:
 * <ul>
 *   <li>{@code tasks}: tasks that ended here (succeeded or failed) with a cache report; brain:
 *       {@code tasks}.
 *   <li>{@code hits}: RDD blocks a task read from this executor's MemoryStore, once per task and
 *       block, not counting a block the task stored itself (the event's {@code hits}); brain:
 *       {@code hits - remote_hits}, when the plan expected those reads.
 *   <li>{@code puts}: RDD blocks a task stored in this MemoryStore (the event's {@code puts}):
 *       first computations and recomputations alike (a block read back from disk and kept in
 *       memory too). Not a miss count: a first computation is a put but no miss.
 *   <li>{@code evictions}: RDD blocks this MemoryStore dropped to make room while a task ran here,
 *       picked in PriorityEntries' order (the event's {@code evicted}); brain: {@code evictions}.
 *       Drops outside any task (no task context) are in neither.
 * </ul>
 *
 * <p>Not counted here, because an executor cannot know them: misses and effective hits are
 * measured against the reads the plan expected of each task (the driver's DAG: a put may be a
 * first computation or a recomputation, and a block a task needed may never touch this store),
 * and a remote hit (a block served by another executor) never reaches this MemoryStore. They are
 * in the brain's {@code stats()}. Metrics must never disturb the task: a failure is one warning
 * and the counters stop.
 */
final class CacheMetrics {
  static final String TASKS = "tasks";
  static final String HITS = "hits";
  static final String PUTS = "puts";
  static final String EVICTIONS = "evictions";

  private final Counter tasks;
  private final Counter hits;
  private final Counter puts;
  private final Counter evictions;
  private volatile boolean failed = false;

  private CacheMetrics(MetricRegistry registry) {
    tasks = registry.counter(TASKS);
    hits = registry.counter(HITS);
    puts = registry.counter(PUTS);
    evictions = registry.counter(EVICTIONS);
  }

  /** The counters registered in the plugin's registry, or null (one warning) if that failed. */
  static CacheMetrics register(PluginContext ctx, String executorId) {
    try {
      return new CacheMetrics(ctx.metricRegistry());
    } catch (Throwable t) {
      warn(executorId, t);
      return null;
    }
  }

  /** Counts one task's report (the one its {@code task_cache} event carries). */
  void taskReported(TaskCounters c, String executorId) {
    if (failed) {
      return;
    }
    try {
      tasks.inc();
      hits.inc(c.hits.size());
      puts.inc(c.puts.size());
      evictions.inc(c.evicted.size());
    } catch (Throwable t) {
      failed = true;
      warn(executorId, t);
    }
  }

  private static void warn(String executorId, Throwable t) {
    LrcLog.warnOnce("executor.metrics", "spark-lrc: cache metrics of executor " + executorId
        + " are off (eviction and the task reports are not affected)", t);
  }
}
