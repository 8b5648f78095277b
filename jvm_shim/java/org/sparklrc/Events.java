package org.sparklrc;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The one place that writes the shim's event JSON lines, with the Jackson that ships in Spark's
 * jars: Jackson's tree model for the job start's nested descriptions (Described compares and
 * reuses them), JsonLine for every flat event (the per-task ones among them, written without a
 * tree). Every event type and field is documented once, in the docstring of
 * {@code spark_plugin/wire.py} (which decodes them); tests/fixtures/events.jsonl ties the two.
 */
final class Events {
  /** Every event type the shim emits; the wire name is the lower-case constant name. */
  enum Type {
    JOB_START, STAGE_SUBMITTED, STAGE_COMPLETED, TASK_END, TASK_CACHE, BLOCK, UNPERSIST, JOB_END,
    EXECUTOR_ADDED, EXECUTOR_REMOVED, BLOCK_MANAGER, EXECUTOR_PLUGIN, TABLE_IN_FORCE, TABLE_APPLIED, APP_END;

    String wireName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private Events() {}

  /** The wire names of all event types, comma-separated (for the fixture test). */
  static String typeNames() {
    StringBuilder b = new StringBuilder();
    for (Type t : Type.values()) {
      b.append(b.length() == 0 ? "" : ",").append(t.wireName());
    }
    return b.toString();
  }

  static String text(ObjectNode node) {
    try {
      return MAPPER.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("spark-lrc: cannot write event JSON", e);
    }
  }

  private static ObjectNode event(Type type) {
    return NODES.objectNode().put("e", type.wireName());
  }

  static ArrayNode array() {
    return NODES.arrayNode();
  }

  private static ArrayNode ints(List<Integer> xs) {
    ArrayNode a = NODES.arrayNode();
    xs.forEach(a::add);
    return a;
  }

  private static ArrayNode strings(Iterable<String> xs) {
    ArrayNode a = NODES.arrayNode();
    xs.forEach(a::add);
    return a;
  }

  // ------------------------------------------------------------------ driver: listener events

  /**
   * {@code stageIds}: all the job's stages; {@code stages}: descriptions of the new ones;
   * {@code received}: when Spark's listener bus delivered the job start to the listener;
   * {@code sent}: when the listener wrote the line (after the lineage walks and descriptions).
   */
  static String jobStart(int job, long time, long received, long sent, List<Integer> stageIds,
      ArrayNode stages) {
    ObjectNode n = event(Type.JOB_START).put("job", job).put("time", time)
        .put("received", received).put("sent", sent);
    n.set("stage_ids", ints(stageIds));
    n.set("stages", stages);
    return text(n);
  }

  /**
   * One stage of a job start (also of LrcBridge.describeStages): {@code rddIds} all its RDDs,
   * {@code rdds} the descriptions of those not described before with the same fields,
   * {@code parts} the partitions a result stage computes when not 0..tasks-1 (else null).
   */
  static ObjectNode stage(int stage, int attempt, int finalRdd, int tasks, List<Integer> parents,
      int shuffle, List<Integer> rddIds, ArrayNode rdds, double gpus, int[] parts) {
    ObjectNode n = NODES.objectNode().put("stage", stage).put("attempt", attempt)
        .put("rdd", finalRdd).put("tasks", tasks);
    n.set("parents", ints(parents));
    n.put("shuffle", shuffle);
    n.set("rdd_ids", ints(rddIds));
    n.set("rdds", rdds);
    if (gpus > 0) {  // a stage bound to GPUs by its resource profile; absent: a CPU stage
      n.put("gpus", gpus);
    }
    if (parts != null) {
      Arrays.stream(parts).forEach(n.putArray("parts")::add);
    }
    return n;
  }

  /** One RDD of a stage; {@code deps} is null when the lineage walk did not reach it. */
  static ObjectNode rdd(int id, String name, String callsite, int parts, String level,
      boolean cached, List<Integer> parents, ArrayNode deps) {
    ObjectNode n = NODES.objectNode().put("id", id).put("name", name == null ? "" : name)
        .put("callsite", callsite == null ? "" : callsite)
        .put("parts", parts).put("level", level).put("cached", cached);
    n.set("parents", ints(parents));
    if (deps != null) {
      n.set("deps", deps);
    }
    return n;
  }

  /** One dependency; {@code map} lists each child partition's parent partitions (explicit). */
  static ObjectNode dep(int parent, String kind, int inStart, int outStart, int length,
      List<List<Integer>> map) {
    ObjectNode n = NODES.objectNode().put("parent", parent).put("kind", kind)
        .put("in_start", inStart).put("out_start", outStart).put("length", length);
    ArrayNode m = n.putArray("map");
    map.forEach(ps -> m.add(ints(ps)));
    return n;
  }

  /** The answer of LrcBridge.describeStages: {@code {"stages":[stage, ...]}}. */
  static String stages(ArrayNode stages) {
    ObjectNode n = NODES.objectNode();
    n.set("stages", stages);
    return text(n);
  }

  /** {@code parts}: the partitions the attempt computes, null when all (then absent). */
  static String stageSubmitted(int stage, int attempt, int tasks, long time, int[] parts) {
    JsonLine line = new JsonLine(Type.STAGE_SUBMITTED).put("stage", stage)
        .put("attempt", attempt).put("tasks", tasks).put("time", time);
    return (parts == null ? line : line.ints("parts", parts)).text();
  }

  static String stageCompleted(int stage, int attempt, boolean failed, long time) {
    return new JsonLine(Type.STAGE_COMPLETED).put("stage", stage).put("attempt", attempt)
        .put("failed", failed).put("time", time).text();
  }

  /** {@code resubmitted}: no run but Spark's notice that it runs a finished task again. */
  static String taskEnd(int stage, int attempt, int partition, String executor, long task,
      boolean success, long durationMs, long execMem, boolean resubmitted) {
    JsonLine line = new JsonLine(Type.TASK_END).put("stage", stage).put("attempt", attempt)
        .put("partition", partition).put("executor", executor).put("task", task)
        .put("success", success).put("duration_ms", durationMs).put("exec_mem", execMem);
    return (resubmitted ? line.put("resubmitted", true) : line).text();
  }

  static String block(String executor, String block, String level, long mem, long disk,
      long time) {
    return new JsonLine(Type.BLOCK).put("executor", executor).put("block", block)
        .put("level", level).put("mem", mem).put("disk", disk).put("time", time).text();
  }

  static String unpersist(int rdd) {
    return new JsonLine(Type.UNPERSIST).put("rdd", rdd).text();
  }

  static String jobEnd(int job, long time, boolean success) {
    return new JsonLine(Type.JOB_END).put("job", job).put("time", time).put("success", success)
        .text();
  }

  static String executorAdded(String executor, String host, int cores,
      Map<String, List<String>> resources) {
    ObjectNode n = event(Type.EXECUTOR_ADDED).put("executor", executor).put("host", host)
        .put("cores", cores);
    ObjectNode res = n.putObject("resources");
    resources.forEach((name, addresses) -> res.set(name, strings(addresses)));
    return text(n);
  }

  static String executorRemoved(String executor) {
    return new JsonLine(Type.EXECUTOR_REMOVED).put("executor", executor).text();
  }

  /** A block manager's unified memory (on-heap storage + execution, the region a task's
   * execution claims come from: lrc.execmem); in local mode the driver's is the executor's. */
  static String blockManager(String executor, long memory) {
    return new JsonLine(Type.BLOCK_MANAGER).put("executor", executor).put("mem", memory).text();
  }

  static String appEnd(long time) {
    return new JsonLine(Type.APP_END).put("time", time).text();
  }

  // ------------------------------------------------------------------ executor: sent to the driver

  static String executorPlugin(String executor, boolean installed, String error) {
    return new JsonLine(Type.EXECUTOR_PLUGIN).put("executor", executor)
        .put("installed", installed).put("error", error).text();
  }

  static String tableInForce(String executor, long version, int stage, long waitedMs) {
    return new JsonLine(Type.TABLE_IN_FORCE).put("executor", executor).put("version", version)
        .put("stage", stage).put("waited_ms", waitedMs).text();
  }

  static String tableApplied(String executor, long version, double lagMs) {
    return new JsonLine(Type.TABLE_APPLIED).put("executor", executor).put("version", version)
        .put("lag_ms", Math.round(lagMs * 1000) / 1000.0).text();
  }

  static String taskCache(String executor, int stage, int partition, long task,
      TaskCounters c, long tableVersion) {
    JsonLine n = new JsonLine(Type.TASK_CACHE).put("executor", executor).put("stage", stage)
        .put("partition", partition).put("task", task).strings("hits", c.hits)
        .strings("puts", c.puts).longs("put_elements", c.putElements)
        .strings("evicted", c.evicted).array("evictions");
    for (TaskCounters.Eviction e : c.evictions) {
      n.element().put("block", e.block).put("order", e.order).put("priority", e.priority)
          .put("for", e.forBlock).end('}'); // "for" is null when no put followed
    }
    long[] cpu = PluginCpu.nanos(); // this executor's plugin CPU so far, by part
    return n.end(']').put("table_version", tableVersion)
        .put("hooks_cpu_ns", cpu[PluginCpu.Part.TASK_HOOKS.ordinal()])
        .put("watch_cpu_ns", cpu[PluginCpu.Part.TABLE_WATCH.ordinal()]).text();
  }
}
