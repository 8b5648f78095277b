package org.sparklrc;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.Resubmitted$;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkContext$;
import org.apache.spark.scheduler.JobSucceeded$;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.apache.spark.scheduler.SparkListenerBlockManagerAdded;
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
import org.apache.spark.storage.BlockUpdatedInfo;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.RDDInfo;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Turns Spark listener events into event JSON lines (written by Events) in the bounded
 * EventBuffer. Registered by LrcDriverPlugin, or alone via
 * {@code spark.extraListeners=org.sparklrc.LrcListener} (events only, Spark's MemoryStore untouched).
 */
public class LrcListener extends SparkListener {
  private volatile SparkContext sc;

  /** For {@code spark.extraListeners}. */
  public LrcListener(SparkConf conf) {
    if (!Settings.pluginConfigured(conf)) { // else LrcDriverPlugin.init already reset the buffer
      Settings settings = Settings.fromConf(conf);
      EventBuffer.reset((int) settings.getLong(Settings.BUFFER_SIZE),
          settings.taskEndsUrgent());
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

  /** Buffers the event {@code line} makes (null: nothing to record); never throws. */
  private static void record(String what, Supplier<String> line) {
    record(what, line, false);
  }

  /** {@code urgent}: wakes the brain at once (see EventBuffer#add). */
  private static void record(String what, Supplier<String> line, boolean urgent) {
    long cpu = PluginCpu.start();
    try {
      String event = line.get();
      if (event != null) {
        EventBuffer.add(event, urgent);
      }
    } catch (Throwable t) {
      LrcLog.warnOnce("listener." + what, "spark-lrc: could not record " + what, t);
    } finally {
      PluginCpu.add(PluginCpu.Part.LISTENER, cpu);
    }
  }

  @Override
  public void onJobStart(SparkListenerJobStart e) {
    EventBuffer.jobStarted(e.jobId());
    long received = System.currentTimeMillis();
    record("a job start", () -> {
      LrcDriverPlugin.noteJobStart();
      SparkContext c = context();
      List<Integer> ids = new ArrayList<>();
      List<int[]> order = new ArrayList<>();
      // RDDs of the described stages, in their order, with what their descriptions say
      List<Described.Rdd> rddOrder = new ArrayList<>();
      Map<Integer, Described.Rdd> inThisEvent = new HashMap<>(); // described above
      ArrayNode stages = Events.array(); // only those no earlier job start described
      for (StageInfo si : CollectionConverters.asJava(e.stageInfos())) {
        ids.add(si.stageId());
        order.add(new int[] {si.stageId(), si.attemptNumber()});
        if (!Described.stage(si.stageId(), si.attemptNumber())) {
          stages.add(stage(c, si, rddOrder, inThisEvent));
        }
      }
      String line = Events.jobStart(e.jobId(), e.time(), received, System.currentTimeMillis(),
          ids, stages);
      Described.sent(order, rddOrder); // only once the line exists (a failure sends nothing)
      return line;
    }, true);
  }

  /** A stage's description; its RDDs described before with the same fields go by id only. */
  private static ObjectNode stage(SparkContext c, StageInfo si, List<Described.Rdd> rddOrder,
      Map<Integer, Described.Rdd> inThisEvent) {
    List<RDDInfo> infos = CollectionConverters.asJava(si.rddInfos());
    int finalRdd = infos.isEmpty() ? -1 : infos.get(0).id();
    Stage live = Lineage.stage(c, si.stageId());
    if (live != null) {
      try {
        finalRdd = live.rdd().id();
        Lineage.cacheDeps(live.rdd());
      } catch (Throwable t) {
        // deps stay omitted
      }
    }
    int shuffle = si.shuffleDepId().isDefined() ? ((Number) si.shuffleDepId().get()).intValue() : -1;
    List<Integer> rddIds = new ArrayList<>();
    ArrayNode rdds = Events.array();
    for (RDDInfo r : infos) {
      // compared as fields, written only when new: a stage lists hundreds of RDDs on GraphX
      Described.Rdd d = Lineage.rdd(r.id(), r.name(), r.callSite(), r.numPartitions(),
          r.storageLevel(), Lineage.ints(r.parentIds()));
      rddIds.add(r.id());
      rddOrder.add(d);
      Described.Rdd here = inThisEvent.get(r.id());
      if (here != null ? !here.equals(d) : !Described.rdd(d)) {
        rdds.add(d.node());
        inThisEvent.put(r.id(), d);
      }
    }
    return Events.stage(si.stageId(), si.attemptNumber(), finalRdd, si.numTasks(),
        Lineage.ints(si.parentIds()), shuffle, rddIds, rdds,
        Lineage.gpusPerTask(c, si.resourceProfileId()),
        live == null ? null : Lineage.resultPartitions(live));
  }

  private static long timeOr(scala.Option<Object> t) {
    return t.isDefined() ? ((Number) t.get()).longValue() : System.currentTimeMillis();
  }

  @Override
  public void onStageSubmitted(SparkListenerStageSubmitted e) {
    StageInfo si = e.stageInfo();
    record("a stage submission", () -> Events.stageSubmitted(si.stageId(), si.attemptNumber(),
        si.numTasks(), timeOr(si.submissionTime()), Lineage.partitionsToRun(context(), si)));
  }

  @Override
  public void onStageCompleted(SparkListenerStageCompleted e) {
    StageInfo si = e.stageInfo();
    record("a stage completion", () -> Events.stageCompleted(si.stageId(), si.attemptNumber(),
        si.failureReason().isDefined(), timeOr(si.completionTime())));
  }

  @Override
  public void onTaskEnd(SparkListenerTaskEnd e) {
    // the task's peak allocation from the unified pool: what execution took from storage
    // (lrc.execmem); a failed task may end without metrics
    long execMem = e.taskMetrics() == null ? 0 : e.taskMetrics().peakOnHeapExecutionMemory();
    // a finished map task whose output died with its executor ends again, as Resubmitted, with
    // the TaskInfo of its successful run: Spark runs it again
    boolean resubmitted = e.reason() == Resubmitted$.MODULE$;
    record("a task end", () -> Events.taskEnd(e.stageId(), e.stageAttemptId(),
        e.taskInfo().partitionId(), e.taskInfo().executorId(), e.taskInfo().taskId(),
        e.taskInfo().successful() && !resubmitted, e.taskInfo().duration(), execMem,
        resubmitted), EventBuffer.taskEndsUrgent());
  }

  @Override
  public void onBlockUpdated(SparkListenerBlockUpdated e) {
    BlockUpdatedInfo u = e.blockUpdatedInfo();
    record("a block update", () -> !(u.blockId() instanceof RDDBlockId) ? null
        : Events.block(u.blockManagerId().executorId(), u.blockId().name(),
            Lineage.levelName(u.storageLevel()), u.memSize(), u.diskSize(),
            System.currentTimeMillis()));
  }

  @Override
  public void onUnpersistRDD(SparkListenerUnpersistRDD e) {
    record("an unpersist", () -> Events.unpersist(e.rddId()));
  }

  @Override
  public void onJobEnd(SparkListenerJobEnd e) {
    record("a job end", () -> Events.jobEnd(e.jobId(), e.time(),
        e.jobResult() == JobSucceeded$.MODULE$));
    EventBuffer.jobEnded(e.jobId());
  }

  @Override
  public void onExecutorAdded(SparkListenerExecutorAdded e) {
    record("an executor", () -> {
      Map<String, List<String>> resources = new LinkedHashMap<>();
      CollectionConverters.asJava(e.executorInfo().resourcesInfo()).forEach(
          (name, info) -> resources.put(name, Arrays.asList(info.addresses())));
      return Events.executorAdded(e.executorId(), e.executorInfo().executorHost(),
          e.executorInfo().totalCores(), resources);
    });
  }

  @Override
  public void onExecutorRemoved(SparkListenerExecutorRemoved e) {
    record("an executor removal", () -> Events.executorRemoved(e.executorId()));
  }

  @Override
  public void onBlockManagerAdded(SparkListenerBlockManagerAdded e) {
    record("a block manager", () -> Events.blockManager(e.blockManagerId().executorId(),
        e.maxOnHeapMem().isDefined() ? (Long) e.maxOnHeapMem().get() : e.maxMem()));
  }

  @Override
  public void onApplicationEnd(SparkListenerApplicationEnd e) {
    record("the application end", () -> Events.appEnd(e.time()));
  }
}
