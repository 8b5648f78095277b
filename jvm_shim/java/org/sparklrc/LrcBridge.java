package org.sparklrc;

/**
 * What Python calls through py4j on the driver (DESIGN.md section 3). All methods are static,
 * never throw for a missing plugin, and exchange only strings and numbers: event lines (see
 * Events) and tables (see TableCodec), whose formats spark_plugin/wire.py documents.
 */
public final class LrcBridge {
  /** The entry point a sidecar's gateway serves (py4j calls the static methods through it). */
  public LrcBridge() {}

  /** The application's {@code spark.*} confs as a JSON object ("{}" without a driver plugin). */
  public static String sparkConf() {
    LrcDriverPlugin p = LrcDriverPlugin.current();
    java.util.Map<String, String> out = new java.util.TreeMap<>();
    if (p != null && p.sc != null) {
      for (scala.Tuple2<String, String> kv : p.sc.conf().getAll()) {
        out.put(kv._1(), kv._2());
      }
    }
    try {
      return new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(out);
    } catch (Exception e) {
      return "{}";
    }
  }

  /**
   * Posts the brain's stats (JSON) to the listener bus as a {@link SummaryEvent}, which the event
   * log keeps; false when no application is running.
   */
  public static boolean postSummary(String statsJson) {
    LrcDriverPlugin p = LrcDriverPlugin.current();
    if (p == null || p.sc == null) {
      return false;
    }
    p.sc.listenerBus().post(new SummaryEvent(statsJson));
    return true;
  }

  /** The brain's counts for the driver's metrics system: {@code name=value} lines. */
  public static void reportMetrics(String lines) {
    LrcDriverPlugin p = LrcDriverPlugin.current();
    BrainMetrics m = p == null ? null : p.metrics;
    if (m != null) {
      m.update(lines);
    }
  }

  /** A sidecar brain (a child process of this driver JVM) owns the tables. */
  public static boolean sidecarRunning() {
    LrcDriverPlugin p = LrcDriverPlugin.current();
    return p != null && p.sidecar != null;
  }

  /** The driver plugin is loaded in this JVM. */
  public static boolean active() {
    return LrcDriverPlugin.current() != null;
  }

  /** Up to {@code max} buffered events, newline-separated JSON, oldest first ("" when none). */
  public static String drain(int max) {
    PluginCpu.wholeThread(PluginCpu.Part.BRAIN_CALLS);
    return EventBuffer.drain(max);
  }

  /** Like {@link #drain(int)}, but blocks up to {@code waitMs} while no event is buffered, and
   * within that lets the batch grow while its oldest event has waited less than
   * {@code lingerMs} (a job start, a task end under a count-based policy, or {@code max}
   * events, end that at once). Unless {@code whole} (a connection {@link #noDelay} set up), a
   * reply holds at most EventBuffer.MAX_REPLY_CHARS: a longer line comes in pieces that Python
   * joins. */
  public static String drainWait(int max, long waitMs, long lingerMs, boolean whole) {
    PluginCpu.wholeThread(PluginCpu.Part.BRAIN_CALLS); // the py4j thread serving the brain
    return EventBuffer.drain(max, waitMs, lingerMs, whole ? 0 : EventBuffer.MAX_REPLY_CHARS);
  }

  /** Sets TCP_NODELAY on the py4j connection of the calling Python thread, given its gateway's
   * server object ({@code GATEWAY_SERVER}); true if replies on it may be of any length (the
   * brain then drains whole replies). See {@link NoDelay}. */
  public static boolean noDelay(Object gatewayServer) {
    return NoDelay.onCallingConnection(gatewayServer);
  }

  /** The wire names of every event type the shim can emit, comma-separated. */
  public static String eventTypes() {
    return Events.typeNames();
  }

  /** Events dropped because the bounded buffer ({@code spark.lrc.bufferSize}) was full. */
  public static long dropped() {
    return EventBuffer.dropped();
  }

  /**
   * Resynchronisation after lost events: if no job runs, empties the event buffer (see
   * {@link EventBuffer#cutIfIdle}) and returns the drop count at the cut, then one block event
   * line per RDD block Spark's BlockManagerMaster knows in memory (the state at the cut: later
   * changes come as events), newline-separated; null while a job runs.
   */
  public static String resyncCut() {
    LrcDriverPlugin p = LrcDriverPlugin.current();
    long dropped = EventBuffer.cutIfIdle();
    if (p == null || p.sc == null || dropped < 0) {
      return null;
    }
    StringBuilder b = new StringBuilder().append(dropped);
    long now = System.currentTimeMillis();
    for (org.apache.spark.storage.StorageStatus st
        : p.sc.env().blockManager().master().getStorageStatus()) {
      String executor = st.blockManagerId().executorId();
      scala.collection.Iterator<scala.Tuple2<org.apache.spark.storage.BlockId,
          org.apache.spark.storage.BlockStatus>> it = st.rddBlocks().iterator();
      while (it.hasNext()) {
        scala.Tuple2<org.apache.spark.storage.BlockId, org.apache.spark.storage.BlockStatus> kv =
            it.next();
        org.apache.spark.storage.BlockStatus bs = kv._2();
        b.append('\n').append(Events.block(executor, kv._1().name(),
            Lineage.levelName(bs.storageLevel()), bs.memSize(), bs.diskSize(), now));
      }
    }
    return b.toString();
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
   * Whether task ends wake a lingering drain at once (see EventBuffer#add): the brain turns them
   * off while no executor's cache is under pressure (spark_plugin.pressure), when their count
   * changes can wait, and on again when one is.
   */
  public static void taskEndsUrgent(boolean urgent) {
    EventBuffer.taskEndsUrgent(urgent);
  }

  /**
   * Publishes a table version: {@code rddArrays} is {@code rddId=p0,p1,...} items separated by
   * {@code ;} (empty array removes the RDD), {@code plannedStages} comma-separated stage ids.
   *
   * @throws IllegalArgumentException on malformed text (Python sees a Py4JJavaError)
   * @throws IllegalStateException when no driver plugin is loaded
   */
  public static void publish(long version, String rddArrays, String plannedStages) {
    publish(version, rddArrays, plannedStages, null);
  }

  /** As above, with the GPU placement moves ({@code moves}, wire.py's format; null: unchanged). */
  public static void publish(long version, String rddArrays, String plannedStages, String moves) {
    LrcDriverPlugin p = LrcDriverPlugin.current();
    if (p == null) {
      throw new IllegalStateException("spark-lrc driver plugin is not loaded: set "
          + "spark.plugins=org.sparklrc.LrcPlugin");
    }
    p.tables.publish(version, rddArrays, plannedStages, moves);
  }

  /** Whether a brain is attached (false after detachBrain or the watchdog's fallback to LRU). */
  public static boolean brainAttached() {
    LrcDriverPlugin p = LrcDriverPlugin.current();
    return p != null && p.tables.brainAttached();
  }

  /** RDD ids that have priorities in the driver's current table, comma-separated. */
  public static String tableRdds() {
    LrcDriverPlugin p = LrcDriverPlugin.current();
    if (p == null) {
      return "";
    }
    StringBuilder b = new StringBuilder();
    for (Integer r : p.tables.tableRdds()) {
      b.append(b.length() == 0 ? "" : ",").append(r);
    }
    return b.toString();
  }

  /** Current table version on the driver (0 = none published). */
  public static long tableVersion() {
    LrcDriverPlugin p = LrcDriverPlugin.current();
    return p == null ? 0 : p.tables.version();
  }

  /** CPU ns of the plugin's code in this (driver) JVM by part: {@code part=ns} items,
   * comma-separated (PluginCpu; executors report theirs with each task). */
  public static String pluginCpu() {
    return PluginCpu.summary();
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
