package org.sparklrc;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The CPU time spark-lrc's own code takes in this JVM, by part: where the plugin's time goes,
 * measured in every run (the overhead report's profile) instead of sampled by a profiler in one.
 * A part is counted one of two ways. Per call: the calling thread's CPU time around the plugin's
 * code on a thread Spark shares (the listener's events on the listener bus, executors' messages on
 * the plugin endpoint, table requests on the RPC dispatcher, an executor's task hooks on the task
 * thread). Whole thread: a thread that runs only the plugin's work (the executor's table watch,
 * the driver's table hold, the py4j thread that serves the brain's calls). Not counted: Spark's
 * RPC carrying the plugin's messages (serialization, Netty), and the ordered map's operations
 * inside MemoryStore (per operation: {@code org.sparklrc.bench.OpsBench}). CPU time leaves out
 * the time a thread blocks (a drain waiting for events, a task waiting for its plan).
 */
final class PluginCpu {
  /** The parts; the wire name is the lower-case constant name. */
  enum Part {
    // driver
    LISTENER, EXECUTOR_EVENTS, TABLE_REQUESTS, BRAIN_CALLS, TABLE_HOLD,
    // executors
    TASK_HOOKS, TABLE_WATCH;

    String wireName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
  private static final boolean ON = supported();
  private static final LongAdder[] PER_CALL = new LongAdder[Part.values().length];
  /** Whole threads: thread id -> {part ordinal, its CPU ns when registered, when last read}
   * (the last read is kept once the thread ends). */
  private static final Map<Long, long[]> WHOLE = new ConcurrentHashMap<>();

  static {
    for (int i = 0; i < PER_CALL.length; i++) {
      PER_CALL[i] = new LongAdder();
    }
  }

  private PluginCpu() {}

  private static boolean supported() {
    try {
      if (THREADS.isCurrentThreadCpuTimeSupported() && !THREADS.isThreadCpuTimeEnabled()) {
        THREADS.setThreadCpuTimeEnabled(true);
      }
      return THREADS.isCurrentThreadCpuTimeSupported() && THREADS.isThreadCpuTimeEnabled();
    } catch (Throwable t) {
      return false;
    }
  }

  /** The calling thread's CPU ns now, to pass to {@link #add}; -1 when not measurable. */
  static long start() {
    return ON ? THREADS.getCurrentThreadCpuTime() : -1;
  }

  /** Adds the calling thread's CPU time since {@code start} to {@code part}. */
  static void add(Part part, long start) {
    if (start >= 0) {
      PER_CALL[part.ordinal()].add(THREADS.getCurrentThreadCpuTime() - start);
    }
  }

  /** Counts all of the calling thread's CPU time from now on as {@code part} (idempotent: a
   * thread registers once per application). */
  static void wholeThread(Part part) {
    if (ON) {
      WHOLE.computeIfAbsent(Thread.currentThread().getId(), id -> {
        long now = THREADS.getCurrentThreadCpuTime();
        return new long[] {part.ordinal(), now, now};
      });
    }
  }

  /** CPU ns per part, this JVM's parts only (a part with nothing counted reads 0). */
  static long[] nanos() {
    long[] out = new long[Part.values().length];
    for (int i = 0; i < out.length; i++) {
      out[i] = PER_CALL[i].sum();
    }
    WHOLE.forEach((id, seen) -> {
      long ns = THREADS.getThreadCpuTime(id); // -1 once the thread has ended: keep the last
      synchronized (seen) {
        if (ns > seen[2]) {
          seen[2] = ns;
        }
        out[(int) seen[0]] += seen[2] - seen[1];
      }
    });
    return out;
  }

  /** {@code part=ns} items, comma-separated, for the driver JVM's parts (LrcBridge#pluginCpu). */
  static String summary() {
    long[] ns = nanos();
    StringBuilder b = new StringBuilder();
    for (Part p : Part.values()) {
      b.append(b.length() == 0 ? "" : ",").append(p.wireName()).append('=').append(ns[p.ordinal()]);
    }
    return b.toString();
  }

  /** Forgets every count: a new application in this JVM. */
  static void reset() {
    for (LongAdder a : PER_CALL) {
      a.reset();
    }
    WHOLE.clear();
  }
}
