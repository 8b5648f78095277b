package org.sparklrc;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.reflect.Field;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.Dependency;
import org.apache.spark.NarrowDependency;
import org.apache.spark.OneToOneDependency;
import org.apache.spark.RangeDependency;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.resource.ResourceProfile;
import org.apache.spark.resource.TaskResourceRequest;
import org.apache.spark.scheduler.DAGScheduler;
import org.apache.spark.scheduler.ResultStage;
import org.apache.spark.scheduler.ShuffleMapStage;
import org.apache.spark.scheduler.Stage;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.storage.StorageLevel;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Walks {@code rdd.dependencies()} into the {@code deps} of job-start events (written by Events).
 * Read-only, best effort: every public method returns null / "" instead of throwing.
 */
final class Lineage {
  /** Largest child partition count for which an explicit partition map is written. */
  static final int MAX_MAP_PARTITIONS = 100000;
  private static final int CACHE_SIZE = 20000;

  /** rdd id -> deps array (never modified once cached), remembered so later job starts still
   * see it (RDDs are immutable). */
  private static final Map<Integer, ArrayNode> DEPS_CACHE =
      new LinkedHashMap<Integer, ArrayNode>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, ArrayNode> e) {
          return size() > CACHE_SIZE;
        }
      };

  private Lineage() {}

  static void resetCache() {
    synchronized (DEPS_CACHE) {
      DEPS_CACHE.clear();
    }
  }

  static ArrayNode cachedDeps(int rddId) {
    synchronized (DEPS_CACHE) {
      return DEPS_CACHE.get(rddId);
    }
  }

  /** The scheduler's live Stage object, or null. */
  static Stage stage(SparkContext sc, int stageId) {
    try {
      if (sc == null) {
        return null;
      }
      DAGScheduler dag = sc.dagScheduler();
      if (dag == null) {
        return null;
      }
      // Read without the scheduler's cooperation: a racy read just means "no deps" (caught).
      Option<Stage> s = dag.stageIdToStage().get((Object) Integer.valueOf(stageId));
      return s.isDefined() ? s.get() : null;
    } catch (Throwable t) {
      return null;
    }
  }

  /**
   * The partitions of its RDD a result stage computes when they are not 0..n-1 (a take's later
   * scans, runJob on chosen partitions), else null.
   */
  static int[] resultPartitions(Stage s) {
    if (!(s instanceof ResultStage)) {
      return null;
    }
    int[] parts = ((ResultStage) s).partitions();
    for (int i = 0; i < parts.length; i++) {
      if (parts[i] != i) {
        return parts.clone();
      }
    }
    return null;
  }

  /**
   * The partitions a stage attempt computes, or null when it computes all of them (or the
   * scheduler no longer has the stage). A later attempt (after a fetch failure), or a first one
   * whose shuffle output is partly there (an executor lost since another job wrote it), runs
   * only what is missing. Read when the listener sees the submission: a task of the attempt that
   * already finished may be left out, and its end then drops nothing.
   */
  static int[] partitionsToRun(SparkContext sc, StageInfo si) {
    Stage s = stage(sc, si.stageId());
    if (s == null || si.attemptNumber() == 0 && si.numTasks() >= s.numTasks()) {
      return null;
    }
    try {
      List<Integer> missing = ints(s.findMissingPartitions()); // result stages: output ids
      int[] ids = s instanceof ResultStage ? ((ResultStage) s).partitions() : null;
      int[] out = new int[missing.size()];
      for (int i = 0; i < out.length; i++) {
        out[i] = ids == null ? missing.get(i) : ids[missing.get(i)];
      }
      return out.length == s.numTasks() ? null : out;
    } catch (Throwable t) {
      return null; // planned as all of the stage: references held a little long, never lost
    }
  }

  /**
   * Walks the narrow lineage of {@code root} (stopping at shuffle dependencies, which are recorded),
   * caches each RDD's deps and returns the RDDs seen in walk order.
   */
  static List<RDD<?>> walk(RDD<?> root) {
    return walk(root, false);
  }

  /**
   * Caches the deps of {@code root}'s narrow lineage, not walking again from an RDD whose deps are
   * cached (its lineage was walked with it; RDDs are immutable): each RDD is walked once in the
   * application, where walking every job's stages again costs work proportional to the lineage's
   * length per stage (GraphX lists dozens of stages per job, over hundreds of RDDs each).
   */
  static void cacheDeps(RDD<?> root) {
    walk(root, true);
  }

  private static List<RDD<?>> walk(RDD<?> root, boolean stopAtCached) {
    List<RDD<?>> seen = new ArrayList<>();
    HashSet<Integer> ids = new HashSet<>();
    ArrayDeque<RDD<?>> todo = new ArrayDeque<>();
    todo.add(root);
    ids.add(root.id());
    while (!todo.isEmpty()) {
      RDD<?> rdd = todo.pollFirst();
      if (stopAtCached && cachedDeps(rdd.id()) != null) {
        continue;
      }
      seen.add(rdd);
      ArrayNode deps = Events.array();
      boolean ok = true;
      try {
        int nParts = rdd.partitions().length;
        for (Dependency<?> d : CollectionConverters.asJava(rdd.dependencies())) {
          deps.add(dep(d, nParts));
          if (d instanceof NarrowDependency) {
            RDD<?> parent = d.rdd();
            if (ids.add(parent.id())) {
              todo.addLast(parent);
            }
          }
        }
      } catch (Throwable t) {
        ok = false;
      }
      if (ok) {
        synchronized (DEPS_CACHE) {
          DEPS_CACHE.put(rdd.id(), deps);
        }
      }
    }
    return seen;
  }

  private static ObjectNode dep(Dependency<?> d,
      int childParts) {
    int parent = d.rdd().id();
    String kind;
    int inStart = 0;
    int outStart = 0;
    int length = 0;
    List<List<Integer>> map = new ArrayList<>();
    if (d instanceof ShuffleDependency) {
      kind = "shuffle";
    } else if (d instanceof OneToOneDependency) {
      kind = "one_to_one";
    } else if (d instanceof RangeDependency) {
      kind = "range";
      int[] r = rangeFields((RangeDependency<?>) d, childParts);
      inStart = r[0];
      outStart = r[1];
      length = r[2];
    } else if (d instanceof NarrowDependency && childParts <= MAX_MAP_PARTITIONS) {
      kind = "explicit";
      NarrowDependency<?> nd = (NarrowDependency<?>) d;
      for (int p = 0; p < childParts; p++) {
        map.add(ints(nd.getParents(p)));
      }
    } else {
      kind = "unknown";
    }
    return Events.dep(parent, kind, inStart, outStart, length, map);
  }

  static List<Integer> ints(scala.collection.Seq<Object> xs) {
    List<Integer> out = new ArrayList<>();
    for (Object x : CollectionConverters.asJava(xs)) {
      out.add(((Number) x).intValue());
    }
    return out;
  }

  /** (inStart, outStart, length) of a RangeDependency: private fields, else probed via getParents. */
  private static int[] rangeFields(RangeDependency<?> d, int childParts) {
    try {
      int[] r = new int[3];
      String[] names = {"inStart", "outStart", "length"};
      for (int i = 0; i < 3; i++) {
        Field f = RangeDependency.class.getDeclaredField(names[i]);
        f.setAccessible(true);
        r[i] = f.getInt(d);
      }
      return r;
    } catch (Throwable t) {
      int out = -1;
      int in = 0;
      int len = 0;
      for (int p = 0; p < childParts; p++) {
        List<Object> ps = CollectionConverters.asJava(d.getParents(p));
        if (!ps.isEmpty()) {
          if (out < 0) {
            out = p;
            in = ((Number) ps.get(0)).intValue();
          }
          len++;
        }
      }
      return new int[] {in, Math.max(out, 0), len};
    }
  }

  static String levelName(StorageLevel l) {
    if (l == null || !l.isValid()) {
      return "NONE";
    }
    String base;
    if (l.useOffHeap()) {
      base = "OFF_HEAP";
    } else if (l.useMemory() && l.useDisk()) {
      base = l.deserialized() ? "MEMORY_AND_DISK" : "MEMORY_AND_DISK_SER";
    } else if (l.useMemory()) {
      base = l.deserialized() ? "MEMORY_ONLY" : "MEMORY_ONLY_SER";
    } else {
      base = "DISK_ONLY";
    }
    return l.replication() > 1 ? base + "_" + l.replication() : base;
  }

  /** An RDD's description, with the deps the walks cached for it (null if none). */
  static Described.Rdd rdd(int id, String name, String callsite, int parts,
      StorageLevel level, List<Integer> parents) {
    return new Described.Rdd(id, name, callsite, parts, levelName(level),
        level != null && level.isValid(), parents, cachedDeps(id));
  }

  /** One stage of describeStages, built from the scheduler's Stage object. */
  private static ObjectNode stage(SparkContext sc, Stage s) {
    List<RDD<?>> rdds = walk(s.rdd());
    List<Integer> parentStages = new ArrayList<>();
    for (Stage p : CollectionConverters.asJava(s.parents())) {
      parentStages.add(p.id());
    }
    int shuffle = s instanceof ShuffleMapStage ? ((ShuffleMapStage) s).shuffleDep().shuffleId() : -1;
    ArrayNode rddNodes = Events.array();
    List<Integer> rddIds = new ArrayList<>();
    for (RDD<?> r : rdds) {
      rddIds.add(r.id());
      List<Integer> parents = new ArrayList<>();
      for (Dependency<?> d : CollectionConverters.asJava(r.dependencies())) {
        parents.add(d.rdd().id());
      }
      rddNodes.add(rdd(r.id(), r.name(), r.getCreationSite(), r.partitions().length,
          r.getStorageLevel(), parents).node());
    }
    return Events.stage(s.id(), s.latestInfo().attemptNumber(), s.rdd().id(), s.numTasks(),
        parentStages, shuffle, rddIds, rddNodes, gpusPerTask(sc, s.resourceProfileId()),
        resultPartitions(s));
  }

  /** GPUs each task of a stage with this resource profile holds (0: a CPU stage, or unknown). */
  static double gpusPerTask(SparkContext sc, int resourceProfileId) {
    try {
      ResourceProfile rp = sc.resourceProfileManager().resourceProfileFromId(resourceProfileId);
      Option<TaskResourceRequest> gpu = rp.taskResources().get("gpu");
      return gpu.isDefined() ? gpu.get().amount() : 0;
    } catch (Throwable t) {
      return 0;
    }
  }

  /** {"stages":[...]} for the given ids, or "" when any of them cannot be described. */
  static String describeStages(SparkContext sc, String stageIdsCsv) {
    try {
      ArrayNode stages = Events.array();
      for (String tok : stageIdsCsv.split(",")) {
        tok = tok.trim();
        if (tok.isEmpty()) {
          continue;
        }
        Stage s = stage(sc, Integer.parseInt(tok));
        if (s == null) {
          return "";
        }
        stages.add(stage(sc, s));
      }
      return Events.stages(stages);
    } catch (Throwable t) {
      return "";
    }
  }
}
