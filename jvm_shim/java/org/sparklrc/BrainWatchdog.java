package org.sparklrc;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Falls back to Spark's LRU when the brain stops taking events: its thread died, its sidecar
 * process was killed, or it hangs. While it is silent, executors keep evicting by the last table
 * (counts that only grow stale); once events have waited {@code spark.lrc.brainTimeoutMs} without
 * a drain, the driver clears every priority (ties: Spark's least-recently-used order) and tells
 * executors that no more plans will come, and says so once in the driver's log. A brain that
 * drains again may publish again: its counts are whole (events were buffered, not lost).
 */
final class BrainWatchdog implements AutoCloseable {
  private final ScheduledExecutorService timer;

  private BrainWatchdog(TableStore tables, long timeoutMs) {
    timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "spark-lrc-brain-watchdog");
      t.setDaemon(true);
      return t;
    });
    long every = Math.max(50, Math.min(1000, timeoutMs / 4));
    timer.scheduleWithFixedDelay(() -> check(tables, timeoutMs), every, every, TimeUnit.MILLISECONDS);
  }

  static BrainWatchdog start(TableStore tables, long timeoutMs) {
    return new BrainWatchdog(tables, timeoutMs);
  }

  private static void check(TableStore tables, long timeoutMs) {
    try {
      long silentMs = EventBuffer.waitingMs();
      if (silentMs > timeoutMs && tables.brainAttached()) {
        fallBack(tables, "the brain has taken no events for " + silentMs / 1000 + " s (it stopped"
            + " or hangs)");
      }
    } catch (Throwable t) {
      LrcLog.warnOnce("watchdog", "spark-lrc: the brain watchdog failed", t);
    }
  }

  /** Clear the table and detach the brain; {@code why} goes into the one warning. */
  static void fallBack(TableStore tables, String why) {
    if (tables.fallBackToLru()) {
      LrcLog.warn("spark-lrc: " + why + "; executors evict in Spark's LRU order from now on");
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
