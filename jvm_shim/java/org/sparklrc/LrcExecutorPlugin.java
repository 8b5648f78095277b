package org.sparklrc;

import java.lang.reflect.Field;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.memory.MemoryEntry;
import org.apache.spark.storage.memory.MemoryStore;

/**
 * Executor half: installs PriorityEntries in the MemoryStore, keeps the table fresh (ask on the
 * first task of an unplanned stage, bounded; poll every spark.lrc.pollMs) and reports per-task
 * cache activity. Any failure leaves Spark's LRU in place; nothing here fails a task.
 */
public final class LrcExecutorPlugin implements ExecutorPlugin {
  private PluginContext ctx;
  private String executorId = "?";
  private volatile PriorityEntries entries;
  private long waitMs;
  private long pollMs;
  private ExecutorService asker;
  private ScheduledExecutorService poller;
  /** Per-stage state is kept for the last RECENT_STAGES stages this executor ran tasks of (oldest
   * started first out), not for the life of the application: live stages are far fewer. A stage
   * still running after that many newer ones started here merely asks or reports once more. */
  private static final int RECENT_STAGES = 1024;
  /** Stage -> its first task's ask (the stage's other tasks wait on it; one ask per stage). */
  private final Map<Integer, CompletableFuture<Long>> stageAsks = recentStages();
  /** Stages whose table_in_force event was sent. */
  private final Set<Integer> reportedStages = Collections.newSetFromMap(recentStages());
  private final Object fetchLock = new Object();
  /** When the last poll went out (nanoTime): an idle executor polls only every IDLE_POLL_NS. */
  private volatile long lastPollNs = 0;
  private static final long IDLE_POLL_NS = 2_000_000_000L;
  /** (stage, partition, task attempt id) of the task this thread runs: Spark unsets TaskContext
   * before onTaskSucceeded/onTaskFailed, which run in the same thread. */
  private final ThreadLocal<long[]> current = new ThreadLocal<>();

  /** The installed map of this JVM's executor (null if none): for tests and the benchmark. */
  static volatile PriorityEntries installed;

  @Override
  public void init(PluginContext ctx, Map<String, String> extraConf) {
    String error = "";
    try {
      this.ctx = ctx;
      this.executorId = ctx.executorID();
      Settings settings = Settings.fromExtraConf(extraConf);
      waitMs = Math.max(0, settings.getLong(Settings.TABLE_WAIT_MS));
      pollMs = settings.getLong(Settings.POLL_MS);
      entries = install(settings);
      installed = entries;
    } catch (Throwable t) {
      entries = null;
      error = String.valueOf(t);
      LrcLog.warnOnce("executor.install", "spark-lrc: could not install the policy-ordered "
          + "MemoryStore map on executor " + executorId + "; Spark's LRU stays in effect", t);
    }
    sendEvent(Events.executorPlugin(executorId, entries != null, error));
    if (entries != null) {
      try {
        asker = Executors.newSingleThreadExecutor(r -> daemon(r, "spark-lrc-ask"));
        if (pollMs > 0) {
          poller = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "spark-lrc-poll"));
          poller.scheduleWithFixedDelay(this::poll, pollMs, pollMs, TimeUnit.MILLISECONDS);
        }
      } catch (Throwable t) {
        LrcLog.warnOnce("executor.threads", "spark-lrc: table refresh threads failed", t);
      }
    }
  }

  private static <V> Map<Integer, V> recentStages() {
    return Collections.synchronizedMap(new LinkedHashMap<Integer, V>() {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<Integer, V> eldest) {
        return size() > RECENT_STAGES;
      }
    });
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
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

  // ---------------------------------------------------------------- table refresh

  private void poll() {
    try {
      PriorityEntries m = entries;
      if (m != null && m.runningTasks() == 0 && System.nanoTime() - lastPollNs < IDLE_POLL_NS) {
        return; // no task can evict here now; the first task of a new stage asks anyway
      }
      lastPollNs = System.nanoTime();
      fetch(-1, 0);
    } catch (Throwable t) {
      LrcLog.warnOnce("executor.poll", "spark-lrc: table poll failed on executor " + executorId
          + " (keeps the table it has)", t);
    }
  }

  /** Asks the driver for changes since our version; applies them. Returns false on no answer. */
  private boolean fetch(int stage, long wait) throws Exception {
    PriorityEntries m = entries;
    if (m == null || ctx == null) {
      return false;
    }
    synchronized (fetchLock) { // one request in flight; versions only move forward
      Object reply = ctx.ask(new TableRequest(executorId, m.version(), stage, wait).encode());
      if (!(reply instanceof String) || ((String) reply).isEmpty()) {
        return false;
      }
      TableCodec.Reply r = TableCodec.Reply.decode((String) reply);
      if (r.reset || r.version > m.version() || !r.planned.isEmpty()) {
        m.applyTable(r.version, r.reset, r.arrays, r.planned);
      }
      return true;
    }
  }

  /** Bounded: the first task of an unplanned stage asks (others of that stage wait on it). */
  private long ensureTable(int stage) {
    long t0 = System.nanoTime();
    CompletableFuture<Long> mine = new CompletableFuture<>();
    CompletableFuture<Long> prev = stageAsks.putIfAbsent(stage, mine);
    CompletableFuture<Long> f = prev == null ? mine : prev;
    if (prev == null) {
      try {
        Future<?> ask = asker.submit(() -> {
          try {
            fetch(stage, waitMs);
          } catch (Throwable t) {
            LrcLog.warnOnce("executor.ask", "spark-lrc: table ask failed on executor "
                + executorId + "; Spark's LRU order stays for now", t);
          }
        });
        ask.get(waitMs + 2000, TimeUnit.MILLISECONDS);
      } catch (Throwable t) {
        LrcLog.warnOnce("executor.askTimeout", "spark-lrc: no table answer in time on executor "
            + executorId, t);
      } finally {
        mine.complete((System.nanoTime() - t0) / 1_000_000L);
      }
    }
    try {
      f.get(waitMs + 2000, TimeUnit.MILLISECONDS);
    } catch (Throwable t) {
      // bounded wait: go on with the table we have
    }
    return (System.nanoTime() - t0) / 1_000_000L;
  }

  // ---------------------------------------------------------------- task hooks

  @Override
  public void onTaskStart() {
    try {
      PriorityEntries m = entries;
      TaskContext tc = TaskContext.get();
      if (m == null || tc == null) {
        return;
      }
      m.taskStarted(tc.taskAttemptId());
      current.set(new long[] {tc.stageId(), tc.partitionId(), tc.taskAttemptId()});
      int stage = tc.stageId();
      long waited = 0;
      CompletableFuture<Long> asked = stageAsks.get(stage);
      if (asked == null ? !m.isPlanned(stage) : !asked.isDone()) {
        waited = ensureTable(stage);
      }
      long v = m.version();
      if (v > 0 && reportedStages.add(stage)) {
        sendEvent(Events.tableInForce(executorId, v, stage, waited));
      }
    } catch (Throwable t) {
      LrcLog.warnOnce("executor.taskStart", "spark-lrc: onTaskStart failed (ignored)", t);
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
    try {
      PriorityEntries m = entries;
      long[] task = current.get();
      current.remove();
      if (m == null || task == null) {
        return;
      }
      PriorityEntries.TaskCounters c = m.taskEnded(task[2]);
      if (c == null) {
        return;
      }
      sendEvent(Events.taskCache(executorId, (int) task[0], (int) task[1], task[2], c,
          m.version()));
    } catch (Throwable t) {
      LrcLog.warnOnce("executor.report", "spark-lrc: task report failed (ignored)", t);
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
      if (poller != null) {
        poller.shutdownNow();
      }
      if (asker != null) {
        asker.shutdownNow();
      }
      if (installed == entries) {
        installed = null;
      }
    } catch (Throwable t) {
      // never fail shutdown
    }
  }
}
