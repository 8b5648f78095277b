package org.sparklrc;

import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Set;

/** The bounded driver-side buffer of event JSON lines that Python drains through LrcBridge. */
final class EventBuffer {
  private static final Object LOCK = new Object();
  private static final ArrayDeque<String> LINES = new ArrayDeque<>();
  /** Lines that never wake the brain (see addLazy): they go with its next drain. */
  private static final ArrayDeque<String> LAZY = new ArrayDeque<>();
  private static int capacity = 1; // set by reset() when an application starts
  private static long dropped = 0;
  /** Jobs started and not ended, kept apart from the lines so that drops cannot lose them. */
  private static final Set<Integer> ACTIVE_JOBS = new HashSet<>();
  /** When the brain last drained (System.nanoTime), or the first event since waits (reset). */
  private static long lastDrainNs = System.nanoTime();
  /** When the oldest buffered line arrived (System.nanoTime; meaningless while empty). */
  private static long oldestNs = System.nanoTime();
  /** A buffered line ends a lingering drain at once (a job start); cleared when emptied. */
  private static boolean urgent = false;
  /** Task ends are urgent too when the brain publishes each one's count changes at once
   * (Settings#taskEndsUrgent): executors should have them before the next tasks evict. The brain
   * turns this off while no executor's cache is under pressure (LrcBridge#taskEndsUrgent). */
  private static volatile boolean taskEndsUrgent = true;
  /**
   * Most characters one drain returns on a py4j connection without TCP_NODELAY (see NoDelay). py4j
   * writes a reply through an 8 KiB BufferedWriter: a longer one leaves the socket in two writes,
   * and Nagle's algorithm holds the second until Python's delayed ACK, 40 ms later (measured: every
   * PageRank job start reached the brain 45-55 ms late). Below the limit a reply is one write
   * (unless py4j escapes many characters).
   */
  static final int MAX_REPLY_CHARS = 7_000;
  /** Starts a reply that holds only a piece of a longer line; the next drain continues it. */
  static final char PIECE = '\u0001';

  private EventBuffer() {}

  /** A new application: empty buffer, new capacity, and whether its task ends are urgent (see
   * above). */
  static void reset(int newCapacity, boolean urgentTaskEnds) {
    synchronized (LOCK) {
      taskEndsUrgent = urgentTaskEnds;
      LINES.clear();
      LAZY.clear();
      ACTIVE_JOBS.clear();
      Described.reset();
      dropped = 0;
      urgent = false;
      lastDrainNs = System.nanoTime();
      capacity = Math.max(1, newCapacity);
    }
  }

  static void add(String jsonLine) {
    add(jsonLine, false);
  }

  static boolean taskEndsUrgent() {
    return taskEndsUrgent;
  }

  static void taskEndsUrgent(boolean urgentTaskEnds) {
    taskEndsUrgent = urgentTaskEnds;
  }

  /** {@code urgentLine}: the brain must see it now, not at the end of a lingering drain's
   * batch (a job start: executors wait for its plan; a task end under a count-based policy). */
  static void add(String jsonLine, boolean urgentLine) {
    synchronized (LOCK) {
      if (LINES.size() + LAZY.size() >= capacity) {
        dropped++;
      } else {
        if (LINES.isEmpty()) {
          oldestNs = System.nanoTime();
        }
        LINES.addLast(jsonLine);
        urgent |= urgentLine;
        if (LINES.size() == 1 || urgentLine) {
          LOCK.notifyAll();
        }
      }
    }
  }

  /**
   * A line only metrics read (an executor's {@code table_applied}, which carries its own lag): it
   * neither wakes nor hurries a drain, and goes with the brain's next one (every drain takes
   * these after the others). Under memory pressure crd publishes a version per batch of task
   * ends, and each executor's report that it applied it cost the brain a drain of its own.
   */
  static void addLazy(String jsonLine) {
    synchronized (LOCK) {
      if (LINES.size() + LAZY.size() >= capacity) {
        dropped++;
      } else {
        LAZY.addLast(jsonLine);
      }
    }
  }

  /** Before a job start's line: the job runs (whether or not its line finds room). */
  static void jobStarted(int job) {
    synchronized (LOCK) {
      ACTIVE_JOBS.add(job);
    }
  }

  /** After a job end's line. */
  static void jobEnded(int job) {
    synchronized (LOCK) {
      ACTIVE_JOBS.remove(job);
    }
  }

  /**
   * A cut for a brain that lost events: if no job runs, empties the buffer and returns the drop
   * count at that moment (every line after the cut belongs to jobs that start after it, so the
   * stream is whole again from here); -1 while a job runs.
   */
  static long cutIfIdle() {
    synchronized (LOCK) {
      if (!ACTIVE_JOBS.isEmpty()) {
        return -1;
      }
      LINES.clear();
      LAZY.clear();
      Described.reset(); // the brain starts over: later job starts describe every stage
      return dropped;
    }
  }

  static String drain(int max) {
    return drain(max, 0, 0, MAX_REPLY_CHARS);
  }

  /**
   * Like {@link #drain(int)}, but waits up to {@code waitMs} for a first event when the buffer is
   * empty: the brain blocks here instead of polling, so an idle driver spends no CPU on it. Then,
   * within the same {@code waitMs}, lets the batch grow until its oldest line has waited
   * {@code lingerMs}, unless an urgent line (see add) or {@code max} lines are there: each drain is a
   * py4j round trip (~0.2 ms of the brain's CPU and as much of the JVM's), and on a job of short
   * tasks, events one at a time made them the brain's largest cost. A reply holds at most
   * {@code maxChars} characters (0: no limit): a longer line comes in pieces (see PIECE).
   */
  static String drain(int max, long waitMs, long lingerMs, int maxChars) {
    int limit = maxChars > 0 ? maxChars : Integer.MAX_VALUE;
    StringBuilder b = new StringBuilder();
    synchronized (LOCK) {
      lastDrainNs = System.nanoTime();
      long deadline = System.nanoTime() + waitMs * 1_000_000L;
      while (waitMs > 0) {
        long until = deadline;
        if (!LINES.isEmpty()) {
          if (urgent || LINES.size() >= max) {
            break;
          }
          until = Math.min(deadline, oldestNs + lingerMs * 1_000_000L);
        }
        long leftNs = until - System.nanoTime();
        if (leftNs <= 0) {
          break;
        }
        try {
          LOCK.wait(Math.max(1, leftNs / 1_000_000L));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      int n = take(LINES, b, 0, max, limit);
      if (LINES.isEmpty()) {
        urgent = false;
        take(LAZY, b, n, max, limit);
      }
    }
    return b.toString();
  }

  /** Moves lines from {@code from} to the reply {@code b} (holding {@code n} lines) while they
   * fit; returns the reply's lines. A lazy line is never cut in pieces (the next drain might
   * serve other lines first): it is short, and alone in a reply it goes whole. */
  private static int take(ArrayDeque<String> from, StringBuilder b, int n, int max, int limit) {
    while (n < max && !from.isEmpty()) {
      String line = from.peekFirst();
      if ((long) b.length() + 1 + line.length() > limit && (n > 0 || from == LINES)) {
        if (n == 0) { // a line longer than a reply: a piece now, the rest stays first
          from.pollFirst();
          from.addFirst(line.substring(limit - 1));
          b.append(PIECE).append(line, 0, limit - 1);
        }
        break;
      }
      if (n > 0) {
        b.append('\n');
      }
      b.append(from.pollFirst());
      n++;
    }
    return n;
  }

  /**
   * How long buffered events have waited for the brain: the time since its last drain while
   * events are buffered, 0 when the buffer is empty (an idle application is not a silent brain).
   */
  static long waitingMs() {
    synchronized (LOCK) {
      if (LINES.isEmpty() && LAZY.isEmpty()) {
        return 0;
      }
      return (System.nanoTime() - lastDrainNs) / 1_000_000L;
    }
  }

  static long dropped() {
    synchronized (LOCK) {
      return dropped;
    }
  }
}
