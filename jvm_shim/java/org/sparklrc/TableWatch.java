package org.sparklrc;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcTimeout;
import scala.concurrent.duration.FiniteDuration;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Executor side of the table push: one daemon thread keeps a request parked at the driver's
 * TableEndpoint and applies each answer the moment it arrives (a publish reaches every executor in
 * one RPC message), then asks again from the new version. Tasks of a stage the table does not plan
 * yet wait for that plan, at most {@code spark.lrc.tableWaitMs} per stage, and only while the
 * driver has a brain. If the driver cannot be reached the table stays as it is (LRU for what it
 * does not cover) and the thread retries with backoff.
 */
final class TableWatch {
  /** How long the driver holds a request without a change (an idle executor's heartbeat). */
  static final long HOLD_MS = 2_000;
  private static final long ASK_TIMEOUT_MS = HOLD_MS + 60_000;
  private static final long MAX_BACKOFF_MS = 5_000;
  /** Stage deadlines are kept for the last RECENT_STAGES stages this executor saw. */
  private static final int RECENT_STAGES = 1024;
  private static final ClassTag<String> STRING = ClassTag$.MODULE$.apply(String.class);

  private final String executorId;
  private final PriorityEntries entries;
  private final Placement placement; // null: GPU placement off
  private final long waitMs;
  private final Thread thread;
  private final Object changed = new Object();
  private volatile boolean stopped = false;
  /** The driver's last answer said a brain is attached (plans of new stages will come). */
  private volatile boolean brain = false;
  /** Stage -> when its tasks stop waiting for its plan (nanoTime): one bounded wait per stage. */
  private final Map<Integer, Long> planDeadlines = Collections.synchronizedMap(
      new LinkedHashMap<Integer, Long>() {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, Long> eldest) {
          return size() > RECENT_STAGES;
        }
      });

  TableWatch(String executorId, PriorityEntries entries, Placement placement, long waitMs) {
    this.executorId = executorId;
    this.entries = entries;
    this.placement = placement;
    this.waitMs = waitMs;
    this.thread = new Thread(this::run, "spark-lrc-table-watch");
    thread.setDaemon(true);
  }

  /** Stages whose plan deadline is remembered (bounded by RECENT_STAGES). */
  int planDeadlines() {
    return planDeadlines.size();
  }

  void start() {
    thread.start();
  }

  void stop() {
    stopped = true;
    thread.interrupt();
  }

  private void run() {
    PluginCpu.wholeThread(PluginCpu.Part.TABLE_WATCH);
    RpcEndpointRef driver = null;
    RpcTimeout timeout = new RpcTimeout(
        FiniteDuration.apply(ASK_TIMEOUT_MS, TimeUnit.MILLISECONDS), "spark.lrc table watch");
    long hold = 0; // the first ask is answered at once: it tells whether a brain is attached
    long backoff = 100;
    double lagMs = Double.NaN; // the last apply's lag, told with the next ask (TableRequest)
    while (!stopped) {
      try {
        if (driver == null) {
          driver = TableEndpoint.driverRef();
        }
        String req = new TableRequest(executorId, entries.version(), hold, lagMs).encode();
        lagMs = Double.NaN; // (an ask that fails loses it: a metric only)
        lagMs = apply(driver.askSync(req, timeout, STRING));
        hold = HOLD_MS;
        backoff = 100;
      } catch (Throwable t) {
        if (stopped) {
          return;
        }
        LrcLog.warnOnce("executor.watch", "spark-lrc: executor " + executorId + " cannot get "
            + "tables from the driver (retrying); Spark's LRU order stays for what its table does"
            + " not cover", t);
        driver = null;
        try {
          Thread.sleep(backoff);
        } catch (InterruptedException e) {
          return;
        }
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
      }
    }
  }

  /** Applies the driver's answer; returns how long after its publish (ms; wall clocks, meaningful
   * where they agree), or NaN if the table did not move. */
  private double apply(String text) {
    TableCodec.Reply r = TableCodec.Reply.decode(text);
    boolean moved = r.applyTo(entries);
    if (r.moves != null && placement != null) {
      try {
        placement.apply(r.moves);
      } catch (RuntimeException e) {
        LrcLog.warnOnce("executor.moves", "spark-lrc: executor " + executorId + " ignored GPU "
            + "placement moves it could not read", e);
      }
    }
    brain = r.brain;
    synchronized (changed) {
      changed.notifyAll();
    }
    return moved && r.publishedMicros > 0
        ? (TableStore.nowMicros() - r.publishedMicros) / 1000.0 : Double.NaN;
  }

  /** Waits (bounded per stage) for the stage's plan if a brain will send one; returns ms waited. */
  long awaitPlan(int stage) {
    long t0 = System.nanoTime();
    if (entries.isPlanned(stage) || !brain) {
      return 0;
    }
    Long deadline = planDeadlines.computeIfAbsent(stage, s -> t0 + waitMs * 1_000_000L);
    synchronized (changed) {
      while (brain && !entries.isPlanned(stage) && !stopped) {
        long leftMs = (deadline - System.nanoTime()) / 1_000_000L;
        if (leftMs <= 0) {
          break;
        }
        try {
          changed.wait(leftMs);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    return (System.nanoTime() - t0) / 1_000_000L;
  }
}
