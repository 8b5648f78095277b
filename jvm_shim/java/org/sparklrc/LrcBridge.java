package org.sparklrc;

/**
 * What Python calls through py4j on the driver (DESIGN.md section 3). All methods are static,
 * never throw for a missing plugin, and exchange only strings and numbers: event lines (see
 * Events) and tables (see TableCodec), whose formats spark_plugin/wire.py documents.
 */
public final class LrcBridge {
  private LrcBridge() {}

  /** The driver plugin is loaded in this JVM. */
  public static boolean active() {
    return LrcDriverPlugin.current() != null;
  }

  /** Up to {@code max} buffered events, newline-separated JSON, oldest first ("" when none). */
  public static String drain(int max) {
    return EventBuffer.drain(max);
  }

  /** Like {@link #drain(int)}, but blocks up to {@code waitMs} while no event is buffered. */
  public static String drainWait(int max, long waitMs) {
    return EventBuffer.drain(max, waitMs);
  }

  /** The wire names of every event type the shim can emit, comma-separated. */
  public static String eventTypes() {
    return Events.typeNames();
  }

  /** Events dropped because the bounded buffer ({@code spark.lrc.bufferSize}) was full. */
  public static long dropped() {
    return EventBuffer.dropped();
  }

  /** Python's brain is present: executors wait (bounded) for plans of new stages. */
  public static void attachBrain() {
    LrcDriverPlugin p = LrcDriverPlugin.current();
    if (p != null) {
      p.tables.attachBrain();
    }
  }

  /** The brain is gone: executors stop waiting (tables already published stay in force). */
  public static void detachBrain() {
    LrcDriverPlugin p = LrcDriverPlugin.current();
    if (p != null) {
      p.tables.detachBrain();
    }
  }

  /**
   * Publishes a table version: {@code rddArrays} is {@code rddId=p0,p1,...} items separated by
   * {@code ;} (empty array removes the RDD), {@code plannedStages} comma-separated stage ids.
   *
   * @throws IllegalArgumentException on malformed text (Python sees a Py4JJavaError)
   * @throws IllegalStateException when no driver plugin is loaded
   */
  public static void publish(long version, String rddArrays, String plannedStages) {
    LrcDriverPlugin p = LrcDriverPlugin.current();
    if (p == null) {
      throw new IllegalStateException("spark-lrc driver plugin is not loaded: set "
          + "spark.plugins=org.sparklrc.LrcPlugin");
    }
    p.tables.publish(version, rddArrays, plannedStages);
  }

  /** Current table version on the driver (0 = none published). */
  public static long tableVersion() {
    LrcDriverPlugin p = LrcDriverPlugin.current();
    return p == null ? 0 : p.tables.version();
  }

  /** The shim's warnings logged in this (driver) JVM since the application started. */
  public static String warnings() {
    return LrcLog.kept();
  }

  /** JSON of the stages' RDD lineage with dependency kinds and partition maps, or "". */
  public static String describeStages(String stageIdsCsv) {
    LrcDriverPlugin p = LrcDriverPlugin.current();
    org.apache.spark.SparkContext sc = p != null ? p.sc : null;
    if (sc == null) {
      try {
        scala.Option<org.apache.spark.SparkContext> a =
            org.apache.spark.SparkContext$.MODULE$.getActive();
        sc = a.isDefined() ? a.get() : null;
      } catch (Throwable t) {
        return "";
      }
    }
    return sc == null ? "" : Lineage.describeStages(sc, stageIdsCsv);
  }
}
