package org.sparklrc;

import org.apache.spark.SparkConf;

/** The shim's {@code spark.lrc.*} keys and defaults (documented in spark_plugin/config.py). */
final class Conf {
  static final String BUFFER_SIZE = "spark.lrc.bufferSize";          // default 100000
  static final String TABLE_WAIT_MS = "spark.lrc.tableWaitMs";       // default 1000
  static final String POLL_MS = "spark.lrc.pollMs";                  // default 100
  static final String FORCE_INSTALL_FAILURE = "spark.lrc.forceInstallFailure"; // test hook
  static final String ENTRIES_FIELD = "spark.lrc.entriesField";      // test hook, default "entries"

  private Conf() {}

  static boolean pluginConfigured(SparkConf conf) {
    return listContains(conf, "spark.plugins", LrcPlugin.class.getName());
  }

  static boolean listenerConfigured(SparkConf conf) {
    return listContains(conf, "spark.extraListeners", LrcListener.class.getName());
  }

  private static boolean listContains(SparkConf conf, String key, String cls) {
    for (String s : get(conf, key, "").split(",")) {
      if (s.trim().equals(cls)) {
        return true;
      }
    }
    return false;
  }

  static long getLong(SparkConf conf, String key, long dflt) {
    try {
      return conf == null ? dflt : Long.parseLong(conf.get(key, Long.toString(dflt)).trim());
    } catch (RuntimeException e) {
      return dflt;
    }
  }

  static boolean getBool(SparkConf conf, String key) {
    try {
      return conf != null && Boolean.parseBoolean(conf.get(key, "false").trim());
    } catch (RuntimeException e) {
      return false;
    }
  }

  static String get(SparkConf conf, String key, String dflt) {
    try {
      return conf == null ? dflt : conf.get(key, dflt);
    } catch (RuntimeException e) {
      return dflt;
    }
  }
}
