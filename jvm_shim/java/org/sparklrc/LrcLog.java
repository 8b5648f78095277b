package org.sparklrc;

import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One warning per kind of failure: the shim never floods the log and never throws. */
final class LrcLog {
  static final Logger LOG = LoggerFactory.getLogger("org.sparklrc");
  private static final ConcurrentHashMap<String, Boolean> SEEN = new ConcurrentHashMap<>();

  private LrcLog() {}

  static void warnOnce(String key, String msg, Throwable t) {
    try {
      if (SEEN.putIfAbsent(key, Boolean.TRUE) == null) {
        if (t == null) {
          LOG.warn(msg);
        } else {
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
