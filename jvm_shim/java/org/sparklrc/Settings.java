package org.sparklrc;

import java.io.InputStream;
import java.util.Collections;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.apache.spark.SparkConf;
import scala.Tuple2;

/**
 * The shim's {@code spark.lrc.*} settings. Keys, defaults and checks have one registry,
 * {@code spark_plugin/config.py}: jvm_shim/build.py writes its defaults into this jar as
 * {@value #DEFAULTS}, so a JVM application without Python still gets them. The driver overlays
 * the application's {@code spark.lrc.*} confs (already validated when Python set them) and hands
 * the result to executors through the map {@code DriverPlugin.init} returns, which Spark passes
 * to {@code ExecutorPlugin.init}: executors read nothing else.
 */
final class Settings {
  static final String DEFAULTS = "lrc-defaults.properties";
  static final String PREFIX = "spark.lrc.";
  static final String POLICY = "spark.lrc.policy";
  static final String BUFFER_SIZE = "spark.lrc.bufferSize";
  static final String TABLE_WAIT_MS = "spark.lrc.tableWaitMs";
  static final String BRAIN_TIMEOUT_MS = "spark.lrc.brainTimeoutMs";
  static final String FORCE_INSTALL_FAILURE = "spark.lrc.forceInstallFailure";
  static final String ENTRIES_FIELD = "spark.lrc.entriesField";
  static final String GPU_PLACEMENT = "spark.lrc.gpu.placement";
  static final String ADMIT = "spark.lrc.admit";
  static final String COUNT_VALUES = "spark.lrc.countValues";
  static final String TRACE_PATH = "spark.lrc.tracePath";
  static final String PUBLISH_MS = "spark.lrc.publishMs";

  private static final Map<String, String> BUILT_IN = loadDefaults();

  private final Map<String, String> values;

  private Settings(Map<String, String> values) {
    this.values = Collections.unmodifiableMap(values);
  }

  private static Map<String, String> loadDefaults() {
    Map<String, String> out = new HashMap<>();
    try (InputStream in = Settings.class.getResourceAsStream(DEFAULTS)) {
      Properties p = new Properties();
      p.load(in);
      p.stringPropertyNames().forEach(k -> out.put(k, p.getProperty(k)));
    } catch (Exception e) {
      LrcLog.warnOnce("settings.defaults", "spark-lrc: the shim jar has no " + DEFAULTS
          + " (rebuild it with `python -m jvm_shim build --force`)", e);
    }
    return out;
  }

  /** Built-in defaults overlaid by the application's {@code spark.lrc.*} confs (driver side). */
  static Settings fromConf(SparkConf conf) {
    Map<String, String> v = new HashMap<>(BUILT_IN);
    if (conf != null) {
      for (Tuple2<String, String> kv : conf.getAllWithPrefix(PREFIX)) {
        v.put(PREFIX + kv._1(), kv._2());
      }
    }
    return new Settings(v);
  }

  /** What the driver plugin handed to executors ({@code ExecutorPlugin.init}'s extraConf). */
  static Settings fromExtraConf(Map<String, String> extraConf) {
    Map<String, String> v = new HashMap<>(BUILT_IN);
    if (extraConf != null) {
      v.putAll(extraConf);
    }
    return new Settings(v);
  }

  /** For {@code DriverPlugin.init} to return (Spark forwards it to every executor). */
  Map<String, String> asMap() {
    return values;
  }

  String get(String key) {
    return values.get(key);
  }

  /** The value as a number; a malformed one is named in a warning and the default is used. */
  long getLong(String key) {
    try {
      return Long.parseLong(values.get(key).trim());
    } catch (RuntimeException e) {
      LrcLog.warnOnce("settings." + key, "spark-lrc: " + key + "=" + values.get(key)
          + " is not a whole number; using " + BUILT_IN.get(key), null);
      return Long.parseLong(BUILT_IN.get(key));
    }
  }

  boolean getBool(String key) {
    return Boolean.parseBoolean(String.valueOf(values.get(key)).trim());
  }

  /** Whether a task counts the values of the serialized blocks it stores
   * ({@code spark.lrc.countValues}; ValueCount): true, false, or auto - on when the run records
   * a trace ({@code spark.lrc.tracePath}), whose replay needs them. */
  boolean countValues() {
    String v = String.valueOf(values.get(COUNT_VALUES)).trim().toLowerCase(Locale.ROOT);
    String trace = values.get(TRACE_PATH);
    return "true".equals(v) || ("auto".equals(v) && trace != null && !trace.trim().isEmpty());
  }

  /** Whether a task end wakes the brain at once: under a count-based policy whose count changes
   * are published after every batch ({@code spark.lrc.publishMs} = 0). Not under lru (it publishes
   * no counts), nor when publishes wait for their period anyway: then a task end waits in the
   * buffer like other events ({@code spark.lrc.batchMs}) instead of costing a drain each. */
  boolean taskEndsUrgent() {
    return !lru() && getLong(PUBLISH_MS) == 0;
  }

  /** Whether the policy is lru, Spark's own order ({@code spark.lrc.policy} read as the brain
   * reads it: trimmed, any case). */
  boolean lru() {
    return "lru".equals(policy());
  }

  /** {@code spark.lrc.policy}, trimmed and lower-cased as the brain reads it. */
  private String policy() {
    return String.valueOf(values.get(POLICY)).trim().toLowerCase(Locale.ROOT);
  }

  /**
   * Whether stores are admitted by rank ({@code spark.lrc.admit}): true, false, or auto - on for
   * crd, the policy measured with it; never under lru, where every block ranks the same and the
   * stored block is the newest. The rule of lrc/policies' {@code admits} (Python).
   */
  boolean admit() {
    String admit = String.valueOf(values.get(ADMIT)).trim().toLowerCase(Locale.ROOT);
    return !lru() && ("true".equals(admit) || ("auto".equals(admit) && "crd".equals(policy())));
  }

  static boolean pluginConfigured(SparkConf conf) {
    return listContains(conf, "spark.plugins", LrcPlugin.class.getName());
  }

  static boolean listenerConfigured(SparkConf conf) {
    return listContains(conf, "spark.extraListeners", LrcListener.class.getName());
  }

  private static boolean listContains(SparkConf conf, String key, String cls) {
    for (String s : conf.get(key, "").split(",")) {
      if (s.trim().equals(cls)) {
        return true;
      }
    }
    return false;
  }
}
