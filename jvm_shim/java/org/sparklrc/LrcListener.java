package org.sparklrc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkContext$;
import org.apache.spark.resource.ResourceInformation;
import org.apache.spark.scheduler.JobSucceeded$;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.apache.spark.scheduler.SparkListenerBlockUpdated;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerUnpersistRDD;
import org.apache.spark.scheduler.Stage;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockUpdatedInfo;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.RDDInfo;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Turns Spark listener events into the event JSON lines of DESIGN.md section 3, in the bounded
 * EventBuffer. Registered by LrcDriverPlugin, or alone via
 * {@code spark.extraListeners=org.sparklrc.LrcListener} (events only, Spark's MemoryStore untouched).
 */
public class LrcListener extends SparkListener {
  private volatile SparkContext sc;

  /** For {@code spark.extraListeners}. */
  public LrcListener(SparkConf conf) {
    if (!Conf.pluginConfigured(conf)) { // else LrcDriverPlugin.init already reset the buffer
      EventBuffer.reset((int) Conf.getLong(conf, Conf.BUFFER_SIZE, EventBuffer.DEFAULT_CAPACITY));
    }
  }

  LrcListener(SparkContext sc) {
    this.sc = sc;
  }

  private SparkContext context() {
    SparkContext c = sc;
    if (c == null) {
      try {
        scala.Option<SparkContext> a = SparkContext$.MODULE$.getActive();
        if (a.isDefined()) {
          c = a.get();
          sc = c;
        }
      } catch (Throwable t) {
        return null;
      }
    }
    return c;
  }

  private static List<Integer> ints(scala.collection.Seq<Object> xs) {
    List<Integer> out = new ArrayList<>();
    for (Object x : CollectionConverters.asJava(xs)) {
      out.add(((Number) x).intValue());
    }
    return out;
  }

  @Override
  public void onJobStart(SparkListenerJobStart e) {
    try {
      LrcDriverPlugin.noteJobStart();
      SparkContext c = context();
      StringBuilder b = new StringBuilder();
      b.append("{\"e\":\"job_start\",\"job\":").append(e.jobId())
          .append(",\"time\":").append(e.time()).append(",\"stages\":[");
      boolean first = true;
      for (StageInfo si : CollectionConverters.asJava(e.stageInfos())) {
        if (!first) {
          b.append(',');
        }
        first = false;
        b.append(stageJson(c, si));
      }
      EventBuffer.add(b.append("]}").toString());
    } catch (Throwable t) {
      LrcLog.warnOnce("listener.jobStart", "spark-lrc: could not record a job start", t);
    }
  }

  private static String stageJson(SparkContext c, StageInfo si) {
    List<RDDInfo> infos = CollectionConverters.asJava(si.rddInfos());
    int finalRdd = infos.isEmpty() ? -1 : infos.get(0).id();
    Stage live = Lineage.stage(c, si.stageId());
    if (live != null) {
      try {
        finalRdd = live.rdd().id();
        Lineage.walk(live.rdd());
      } catch (Throwable t) {
        // deps stay omitted
      }
    }
    int shuffle = si.shuffleDepId().isDefined() ? ((Number) si.shuffleDepId().get()).intValue() : -1;
    StringBuilder b = new StringBuilder();
    b.append("{\"stage\":").append(si.stageId())
        .append(",\"attempt\":").append(si.attemptNumber())
        .append(",\"rdd\":").append(finalRdd)
        .append(",\"tasks\":").append(si.numTasks())
        .append(",\"parents\":").append(Json.ints(ints(si.parentIds())))
        .append(",\"shuffle\":").append(shuffle)
        .append(",\"rdds\":[");
    boolean first = true;
    for (RDDInfo r : infos) {
      if (!first) {
        b.append(',');
      }
      first = false;
      b.append(Lineage.rddJson(r.id(), r.name(), r.numPartitions(), r.storageLevel(),
          ints(r.parentIds()), Lineage.cachedDeps(r.id())));
    }
    return b.append("]}").toString();
  }

  @Override
  public void onStageSubmitted(SparkListenerStageSubmitted e) {
    try {
      StageInfo si = e.stageInfo();
      long time = si.submissionTime().isDefined()
          ? ((Number) si.submissionTime().get()).longValue() : System.currentTimeMillis();
      EventBuffer.add("{\"e\":\"stage_submitted\",\"stage\":" + si.stageId() + ",\"attempt\":"
          + si.attemptNumber() + ",\"tasks\":" + si.numTasks() + ",\"time\":" + time + "}");
    } catch (Throwable t) {
      LrcLog.warnOnce("listener.stageSubmitted", "spark-lrc: could not record a stage", t);
    }
  }

  @Override
  public void onStageCompleted(SparkListenerStageCompleted e) {
    try {
      StageInfo si = e.stageInfo();
      long time = si.completionTime().isDefined()
          ? ((Number) si.completionTime().get()).longValue() : System.currentTimeMillis();
      EventBuffer.add("{\"e\":\"stage_completed\",\"stage\":" + si.stageId() + ",\"attempt\":"
          + si.attemptNumber() + ",\"failed\":" + si.failureReason().isDefined() + ",\"time\":"
          + time + "}");
    } catch (Throwable t) {
      LrcLog.warnOnce("listener.stageCompleted", "spark-lrc: could not record a stage", t);
    }
  }

  @Override
  public void onTaskEnd(SparkListenerTaskEnd e) {
    try {
      EventBuffer.add("{\"e\":\"task_end\",\"stage\":" + e.stageId() + ",\"attempt\":"
          + e.stageAttemptId() + ",\"partition\":" + e.taskInfo().partitionId() + ",\"executor\":"
          + Json.str(e.taskInfo().executorId()) + ",\"task\":" + e.taskInfo().taskId()
          + ",\"success\":" + e.taskInfo().successful() + ",\"duration_ms\":"
          + e.taskInfo().duration() + "}");
    } catch (Throwable t) {
      LrcLog.warnOnce("listener.taskEnd", "spark-lrc: could not record a task end", t);
    }
  }

  @Override
  public void onBlockUpdated(SparkListenerBlockUpdated e) {
    try {
      BlockUpdatedInfo u = e.blockUpdatedInfo();
      BlockId id = u.blockId();
      if (!(id instanceof RDDBlockId)) {
        return;
      }
      EventBuffer.add("{\"e\":\"block\",\"executor\":" + Json.str(u.blockManagerId().executorId())
          + ",\"block\":" + Json.str(id.name()) + ",\"level\":\""
          + Lineage.levelName(u.storageLevel()) + "\",\"mem\":" + u.memSize() + ",\"disk\":"
          + u.diskSize() + ",\"time\":" + System.currentTimeMillis() + "}");
    } catch (Throwable t) {
      LrcLog.warnOnce("listener.block", "spark-lrc: could not record a block update", t);
    }
  }

  @Override
  public void onUnpersistRDD(SparkListenerUnpersistRDD e) {
    EventBuffer.add("{\"e\":\"unpersist\",\"rdd\":" + e.rddId() + "}");
  }

  @Override
  public void onJobEnd(SparkListenerJobEnd e) {
    try {
      boolean ok = e.jobResult() == JobSucceeded$.MODULE$;
      EventBuffer.add("{\"e\":\"job_end\",\"job\":" + e.jobId() + ",\"time\":" + e.time()
          + ",\"success\":" + ok + "}");
    } catch (Throwable t) {
      LrcLog.warnOnce("listener.jobEnd", "spark-lrc: could not record a job end", t);
    }
  }

  @Override
  public void onExecutorAdded(SparkListenerExecutorAdded e) {
    try {
      StringBuilder res = new StringBuilder("{");
      boolean first = true;
      Map<String, ResourceInformation> m =
          CollectionConverters.asJava(e.executorInfo().resourcesInfo());
      for (Map.Entry<String, ResourceInformation> r : m.entrySet()) {
        if (!first) {
          res.append(',');
        }
        first = false;
        res.append(Json.str(r.getKey())).append(':')
            .append(Json.strs(java.util.Arrays.asList(r.getValue().addresses())));
      }
      res.append('}');
      EventBuffer.add("{\"e\":\"executor_added\",\"executor\":" + Json.str(e.executorId())
          + ",\"host\":" + Json.str(e.executorInfo().executorHost()) + ",\"cores\":"
          + e.executorInfo().totalCores() + ",\"resources\":" + res + "}");
    } catch (Throwable t) {
      LrcLog.warnOnce("listener.executorAdded", "spark-lrc: could not record an executor", t);
    }
  }

  @Override
  public void onExecutorRemoved(SparkListenerExecutorRemoved e) {
    EventBuffer.add("{\"e\":\"executor_removed\",\"executor\":" + Json.str(e.executorId()) + "}");
  }

  @Override
  public void onApplicationEnd(SparkListenerApplicationEnd e) {
    EventBuffer.add("{\"e\":\"app_end\",\"time\":" + e.time() + "}");
  }
}
