package org.sparklrc;

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
import org.apache.spark.scheduler.DAGScheduler;
import org.apache.spark.scheduler.ShuffleMapStage;
import org.apache.spark.scheduler.Stage;
import org.apache.spark.storage.StorageLevel;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Walks {@code rdd.dependencies()} into the {@code deps} JSON of DESIGN.md section 3. Read-only,
 * best effort: every public method returns null / "" instead of throwing.
 */
final class Lineage {
  /** Largest child partition count for which an explicit partition map is written. */
  static final int MAX_MAP_PARTITIONS = 100000;
  private static final int CACHE_SIZE = 20000;

  /** rdd id -> deps JSON array, remembered so later job starts still see it (RDDs are immutable). */
  private static final Map<Integer, String> DEPS_CACHE =
      new LinkedHashMap<Integer, String>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, String> e) {
          return size() > CACHE_SIZE;
        }
      };

  private Lineage() {}

  static void resetCache() {
    synchronized (DEPS_CACHE) {
      DEPS_CACHE.clear();
    }
  }

  static String cachedDeps(int rddId) {
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
   * Walks the narrow lineage of {@code root} (stopping at shuffle dependencies, which are recorded),
   * caches each RDD's deps JSON and returns the RDDs seen in walk order.
   */
  static List<RDD<?>> walk(RDD<?> root) {
    List<RDD<?>> seen = new ArrayList<>();
    HashSet<Integer> ids = new HashSet<>();
    ArrayDeque<RDD<?>> todo = new ArrayDeque<>();
    todo.add(root);
    ids.add(root.id());
    while (!todo.isEmpty()) {
      RDD<?> rdd = todo.pollFirst();
      seen.add(rdd);
      StringBuilder deps = new StringBuilder("[");
      boolean first = true;
      boolean ok = true;
      try {
        int nParts = rdd.partitions().length;
        for (Dependency<?> d : CollectionConverters.asJava(rdd.dependencies())) {
          if (!first) {
            deps.append(',');
          }
          first = false;
          deps.append(depJson(d, nParts));
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
          DEPS_CACHE.put(rdd.id(), deps.append(']').toString());
        }
      }
    }
    return seen;
  }

  private static String depJson(Dependency<?> d, int childParts) {
    int parent = d.rdd().id();
    String kind;
    int inStart = 0;
    int outStart = 0;
    int length = 0;
    String map = "[]";
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
      StringBuilder b = new StringBuilder("[");
      for (int p = 0; p < childParts; p++) {
        if (p > 0) {
          b.append(',');
        }
        b.append('[');
        boolean f = true;
        for (Object x : CollectionConverters.asJava(nd.getParents(p))) {
          if (!f) {
            b.append(',');
          }
          f = false;
          b.append(((Number) x).intValue());
        }
        b.append(']');
      }
      map = b.append(']').toString();
    } else {
      kind = "unknown";
    }
    return "{\"parent\":" + parent + ",\"kind\":\"" + kind + "\",\"in_start\":" + inStart
        + ",\"out_start\":" + outStart + ",\"length\":" + length + ",\"map\":" + map + "}";
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

  static String rddJson(int id, String name, int parts, StorageLevel level, List<Integer> parents,
      String deps) {
    StringBuilder b = new StringBuilder();
    b.append("{\"id\":").append(id)
        .append(",\"name\":").append(Json.str(name == null ? "" : name))
        .append(",\"parts\":").append(parts)
        .append(",\"level\":\"").append(levelName(level)).append('"')
        .append(",\"cached\":").append(level != null && level.isValid())
        .append(",\"parents\":").append(Json.ints(parents));
    if (deps != null) {
      b.append(",\"deps\":").append(deps);
    }
    return b.append('}').toString();
  }

  /** One stage of describeStages, built from the scheduler's Stage object. */
  static String stageJson(Stage s) {
    List<RDD<?>> rdds = walk(s.rdd());
    List<Integer> parentStages = new ArrayList<>();
    for (Stage p : CollectionConverters.asJava(s.parents())) {
      parentStages.add(p.id());
    }
    int shuffle = s instanceof ShuffleMapStage ? ((ShuffleMapStage) s).shuffleDep().shuffleId() : -1;
    StringBuilder b = new StringBuilder();
    b.append("{\"stage\":").append(s.id())
        .append(",\"attempt\":").append(s.latestInfo().attemptNumber())
        .append(",\"rdd\":").append(s.rdd().id())
        .append(",\"tasks\":").append(s.numTasks())
        .append(",\"parents\":").append(Json.ints(parentStages))
        .append(",\"shuffle\":").append(shuffle)
        .append(",\"rdds\":[");
    boolean first = true;
    for (RDD<?> r : rdds) {
      List<Integer> parents = new ArrayList<>();
      for (Dependency<?> d : CollectionConverters.asJava(r.dependencies())) {
        parents.add(d.rdd().id());
      }
      if (!first) {
        b.append(',');
      }
      first = false;
      b.append(rddJson(r.id(), r.name(), r.partitions().length, r.getStorageLevel(), parents,
          cachedDeps(r.id())));
    }
    return b.append("]}").toString();
  }

  /** {"stages":[...]} for the given ids, or "" when any of them cannot be described. */
  static String describeStages(SparkContext sc, String stageIdsCsv) {
    try {
      StringBuilder b = new StringBuilder("{\"stages\":[");
      boolean first = true;
      for (String tok : stageIdsCsv.split(",")) {
        tok = tok.trim();
        if (tok.isEmpty()) {
          continue;
        }
        Stage s = stage(sc, Integer.parseInt(tok));
        if (s == null) {
          return "";
        }
        if (!first) {
          b.append(',');
        }
        first = false;
        b.append(stageJson(s));
      }
      return b.append("]}").toString();
    } catch (Throwable t) {
      return "";
    }
  }
}
