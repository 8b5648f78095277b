package org.sparklrc;

import java.util.ArrayDeque;

/** The bounded driver-side buffer of event JSON lines that Python drains through LrcBridge. */
final class EventBuffer {
  private static final Object LOCK = new Object();
  private static final ArrayDeque<String> LINES = new ArrayDeque<>();
  private static int capacity = 1; // set by reset() when an application starts
  private static long dropped = 0;

  private EventBuffer() {}

  /** A new application: empty buffer, new capacity. */
  static void reset(int newCapacity) {
    synchronized (LOCK) {
      LINES.clear();
      dropped = 0;
      capacity = Math.max(1, newCapacity);
    }
  }

  static void add(String jsonLine) {
    synchronized (LOCK) {
      if (LINES.size() >= capacity) {
        dropped++;
      } else {
        LINES.addLast(jsonLine);
        if (LINES.size() == 1) {
          LOCK.notifyAll();
        }
      }
    }
  }

  static String drain(int max) {
    return drain(max, 0);
  }

  /**
   * Like {@link #drain(int)}, but waits up to {@code waitMs} for a first event when the buffer is
   * empty: the brain blocks here instead of polling, so an idle driver spends no CPU on it.
   */
  static String drain(int max, long waitMs) {
    StringBuilder b = new StringBuilder();
    synchronized (LOCK) {
      long deadline = System.nanoTime() + waitMs * 1_000_000L;
      while (LINES.isEmpty() && waitMs > 0) {
        long left = (deadline - System.nanoTime()) / 1_000_000L;
        if (left <= 0) {
          break;
        }
        try {
          LOCK.wait(left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      int n = 0;
      while (n < max && !LINES.isEmpty()) {
        if (n > 0) {
          b.append('\n');
        }
        b.append(LINES.pollFirst());
        n++;
      }
    }
    return b.toString();
  }

  static long dropped() {
    synchronized (LOCK) {
      return dropped;
    }
  }
}
