package org.sparklrc;

import java.lang.reflect.Field;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.memory.MemoryEntry;
import org.apache.spark.storage.memory.MemoryStore;

/**
 * Executor half: installs PriorityEntries in the MemoryStore, keeps the table current through a
 * TableWatch (the driver pushes every change; tasks of an unplanned stage wait, bounded, for its
 * plan) and reports per-task cache activity, as events to the driver and as counters in Spark's
 * metrics system (CacheMetrics). Any failure leaves Spark's LRU in place; nothing here fails a
 * task.
 */
public final class LrcExecutorPlugin implements ExecutorPlugin {
  private PluginContext ctx;
  private String executorId = "?";
  private volatile PriorityEntries entries;
  private volatile TableWatch watch;
  private volatile CacheMetrics metrics;
  private volatile Placement placement;
  /** Stages whose table_in_force event was sent: the last RECENT_STAGES stages that ran here. */
  private static final int RECENT_STAGES = 1024;
  private final Set<Integer> reportedStages = Collections.newSetFromMap(
      Collections.synchronizedMap(new LinkedHashMap<Integer, Boolean>() {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, Boolean> eldest) {
          return size() > RECENT_STAGES;
        }
      }));
  /** (stage, partition, task attempt id) of the task this thread runs: Spark unsets TaskContext
   * before onTaskSucceeded/onTaskFailed, which run in the same thread. */
  private final ThreadLocal<long[]> current = new ThreadLocal<>();

  /** The installed map of this JVM's executor (null if none): for tests and the benchmark. */
  static volatile PriorityEntries installed;

  /** {@link #installed}, for the shim's checks in org.sparklrc.bench. */
  public static PriorityEntries installedEntries() {
    return installed;
  }
  /** This JVM's plugin (null before init): {@link #stateSizes()} reads it. */
  private static volatile LrcExecutorPlugin plugin;

  /** Entries of this executor's plugin state, by structure ("" if none is installed): read by
   * {@code org.sparklrc.bench.StateProbe} in a task, for the bounded-state benchmark. */
  public static String stateSizes() {
    LrcExecutorPlugin p = plugin;
    PriorityEntries m = p == null ? null : p.entries;
    if (m == null) {
      return "";
    }
    int[] s = m.stateSizes();
    TableWatch w = p.watch;
    return "executor=" + p.executorId + ",cached_blocks=" + m.size() + ",rdd_blocks=" + s[4]
        + ",table_rdds=" + s[0]
        + ",priorities=" + s[1] + ",planned_stages=" + s[2] + ",counted_tasks=" + s[3]
        + ",reported_stages=" + p.reportedStages.size()
        + ",plan_deadlines=" + (w == null ? 0 : w.planDeadlines());
  }

  @Override
  public void init(PluginContext ctx, Map<String, String> extraConf) {
    String error = "";
    long waitMs = 0;
    boolean placeGpuInputs = false;
    try {
      this.ctx = ctx;
      this.executorId = ctx.executorID();
      Settings settings = Settings.fromExtraConf(extraConf);
      waitMs = Math.max(0, settings.getLong(Settings.TABLE_WAIT_MS));
      if (settings.lru()) {
        waitMs = 0; // Spark's own order needs no table: no task waits for one
      }
      placeGpuInputs = settings.getBool(Settings.GPU_PLACEMENT);
      entries = install(settings);
      entries.setAdmit(settings.admit());
      entries.setCountValues(settings.countValues());
      installed = entries;
      plugin = this;
    } catch (Throwable t) {
      entries = null;
      error = String.valueOf(t);
      LrcLog.warnOnce("executor.install", "spark-lrc: could not install the policy-ordered "
          + "MemoryStore map on executor " + executorId + "; Spark's LRU stays in effect", t);
    }
    sendEvent(Events.executorPlugin(executorId, entries != null, error));
    if (entries != null) {
      // in init: Spark takes the plugin's metric source only if it has metrics when init returns
      metrics = CacheMetrics.register(ctx, executorId);
      if (placeGpuInputs) {
        placement = startPlacement(entries);
      }
      try {
        TableWatch w = new TableWatch(executorId, entries, placement, waitMs);
        w.start();
        watch = w;
      } catch (Throwable t) {
        LrcLog.warnOnce("executor.threads", "spark-lrc: table watch thread failed to start", t);
      }
    }
  }

  /** GPU placement: wraps the replication policy and starts the mover thread; null if it fails. */
  private Placement startPlacement(PriorityEntries entries) {
    try {
      Placement p = new Placement(executorId, entries);
      PlacementPolicy.install(SparkEnv.get().blockManager());
      Placement.current = p;
      p.start();
      return p;
    } catch (Throwable t) {
      LrcLog.warnOnce("executor.placement", "spark-lrc: GPU placement is off on executor "
          + executorId + " (its block replication policy could not be wrapped)", t);
      return null;
    }
  }

  /** Swaps MemoryStore.entries for a PriorityEntries holding the same blocks in the same order. */
  @SuppressWarnings("unchecked")
  static PriorityEntries install(Settings settings) throws Exception {
    if (settings.getBool(Settings.FORCE_INSTALL_FAILURE)) {
      throw new IllegalStateException("install failure forced by "
          + Settings.FORCE_INSTALL_FAILURE);
    }
    String fieldName = settings.get(Settings.ENTRIES_FIELD);
    MemoryStore store = SparkEnv.get().blockManager().memoryStore();
    Field f = MemoryStore.class.getDeclaredField(fieldName);
    f.setAccessible(true);
    Object old = f.get(store);
    if (old instanceof PriorityEntries) {
      return (PriorityEntries) old; // already installed in this JVM's store
    }
    if (!(old instanceof LinkedHashMap)) {
      throw new IllegalStateException("MemoryStore." + fieldName + " is "
          + (old == null ? "null" : old.getClass().getName()) + ", not a LinkedHashMap");
    }
    PriorityEntries fresh = new PriorityEntries();
    synchronized (old) {
      fresh.copyFrom((Map<BlockId, MemoryEntry<?>>) old);
      f.set(store, fresh);
    }
    if (f.get(store) != fresh) {
      throw new IllegalStateException("MemoryStore." + fieldName + " could not be replaced");
    }
    return fresh;
  }

  // ---------------------------------------------------------------- task hooks

  @Override
  public void onTaskStart() {
    long cpu = PluginCpu.start();
    try {
      PriorityEntries m = entries;
      TaskContext tc = TaskContext.get();
      if (m == null || tc == null) {
        return;
      }
      m.taskStarted(tc.taskAttemptId());
      current.set(new long[] {tc.stageId(), tc.partitionId(), tc.taskAttemptId()});
      int stage = tc.stageId();
      TableWatch w = watch;
      long waited = w == null ? 0 : w.awaitPlan(stage);
      long v = m.version();
      if (v > 0 && reportedStages.add(stage)) {
        sendEvent(Events.tableInForce(executorId, v, stage, waited));
      }
    } catch (Throwable t) {
      LrcLog.warnOnce("executor.taskStart", "spark-lrc: onTaskStart failed (ignored)", t);
    } finally {
      PluginCpu.add(PluginCpu.Part.TASK_HOOKS, cpu);
    }
  }

  @Override
  public void onTaskSucceeded() {
    report();
  }

  @Override
  public void onTaskFailed(TaskFailedReason reason) {
    report();
  }

  private void report() {
    long cpu = PluginCpu.start();
    try {
      PriorityEntries m = entries;
      long[] task = current.get();
      current.remove();
      if (m == null || task == null) {
        return;
      }
      TaskCounters c = m.taskEnded(task[2]);
      if (c == null) {
        return;
      }
      c.countLater();
      CacheMetrics cm = metrics;
      if (cm != null) {
        cm.taskReported(c, executorId); // first: no sink lags what the driver was sent
      }
      sendEvent(Events.taskCache(executorId, (int) task[0], (int) task[1], task[2], c,
          m.version()));
    } catch (Throwable t) {
      LrcLog.warnOnce("executor.report", "spark-lrc: task report failed (ignored)", t);
    } finally {
      PluginCpu.add(PluginCpu.Part.TASK_HOOKS, cpu);
    }
  }

  private void sendEvent(String json) {
    try {
      if (ctx != null) {
        ctx.send(LrcDriverPlugin.EVENT_PREFIX + json);
      }
    } catch (Throwable t) {
      LrcLog.warnOnce("executor.send", "spark-lrc: could not reach the driver from executor "
          + executorId, t);
    }
  }

  @Override
  public void shutdown() {
    try {
      String counted = ValueCount.cost();
      if (counted != null) {
        LrcLog.info("spark-lrc: executor " + executorId + ": " + counted);
      }
      TableWatch w = watch;
      if (w != null) {
        w.stop();
      }
      Placement p = placement;
      if (p != null) {
        p.stop();
        if (Placement.current == p) {
          Placement.current = null;
        }
      }
      if (installed == entries) {
        installed = null;
      }
    } catch (Throwable t) {
      // never fail shutdown
    }
  }
}
