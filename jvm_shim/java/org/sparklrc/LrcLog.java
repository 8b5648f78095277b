package org.sparklrc;

import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One warning per kind of failure: the shim never floods the log and never throws. */
final class LrcLog {
  static final Logger LOG = LoggerFactory.getLogger("org.sparklrc");
  private static final ConcurrentHashMap<String, Boolean> SEEN = new ConcurrentHashMap<>();

  private static final int MAX_KEPT = 200;
  private static final java.util.ArrayDeque<String> KEPT = new java.util.ArrayDeque<>();

  private LrcLog() {}

  /** A new application in this JVM: warn again, forget what was kept. */
  static void reset() {
    SEEN.clear();
    synchronized (KEPT) {
      KEPT.clear();
    }
  }

  /** Warnings logged in this JVM since the application started (newest last). */
  static String kept() {
    synchronized (KEPT) {
      return String.join("\n", KEPT);
    }
  }

  static void warn(String msg) {
    synchronized (KEPT) {
      if (KEPT.size() >= MAX_KEPT) {
        KEPT.pollFirst();
      }
      KEPT.addLast(msg);
    }
    LOG.warn(msg);
  }

  static void warnOnce(String key, String msg, Throwable t) {
    try {
      if (SEEN.putIfAbsent(key, Boolean.TRUE) == null) {
        if (t == null) {
          warn(msg);
        } else {
          synchronized (KEPT) {
            KEPT.addLast(msg + ": " + t);
          }
          LOG.warn(msg + ": " + t, t);
        }
      }
    } catch (Throwable ignored) {
      // logging must never fail the caller
    }
  }

  static void info(String msg) {
    try {
      LOG.info(msg);
    } catch (Throwable ignored) {
      // ignore
    }
  }
}
