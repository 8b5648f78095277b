package org.sparklrc;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What job_start events already described, so that later ones name it by id: stages (id ->
 * attempt) and RDDs (id -> the description sent, as fields: comparing them writes no JSON).
 * Spark lists every stage of a job, skipped ones included, under new stage ids after the first job ends (the scheduler forgets
 * ended jobs' stages), but over the same RDDs: an iterative application's job starts grow
 * with its lineage while the RDDs a job adds are few. An RDD whose description changed (a
 * storage level set later, deps the walk could not reach before) is described again.
 *
 * <p>Bounded, least recently used out: 1,024 of each holds a 1,000-stage job and the lineage an
 * iterative job names again (its recent RDDs), and keeps the brain's copy small enough that the
 * driver's memory stops growing early in a long application (results/reliability/scale.md). A
 * stage or RDD forgotten here is only described again. The brain's memory
 * ({@code spark_plugin/events.py}, {@code StageMemory}) sees the same job starts, is touched in
 * the same order and is twice as large, so it holds everything this does (LRU's inclusion
 * property). Lost events break that: the buffer's reset and its resynchronisation cut forget
 * everything here too (EventBuffer).
 */
final class Described {
  static final int STAGES = 1024;
  static final int RDDS = 1024;

  private static final Map<Integer, Integer> STAGE = lru(STAGES);
  private static final Map<Integer, Rdd> RDD = lru(RDDS);

  private Described() {}

  /**
   * The fields of an RDD's description ({@link Events#rdd}); equal when the text would be equal.
   * {@code deps} compares by identity: Lineage caches each RDD's deps array once, unchanged.
   */
  static final class Rdd {
    final int id;
    final String name;
    final String callsite;
    final int parts;
    final String level;
    final boolean cached;
    final List<Integer> parents;
    final ArrayNode deps;

    Rdd(int id, String name, String callsite, int parts, String level, boolean cached,
        List<Integer> parents, ArrayNode deps) {
      this.id = id;
      this.name = name;
      this.callsite = callsite;
      this.parts = parts;
      this.level = level;
      this.cached = cached;
      this.parents = parents;
      this.deps = deps;
    }

    /** The description as the event writes it. */
    ObjectNode node() {
      return Events.rdd(id, name, callsite, parts, level, cached, parents, deps);
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof Rdd)) {
        return false;
      }
      Rdd r = (Rdd) o;
      return id == r.id && parts == r.parts && cached == r.cached && deps == r.deps
          && Objects.equals(name, r.name) && Objects.equals(callsite, r.callsite)
          && level.equals(r.level) && parents.equals(r.parents);
    }

    @Override
    public int hashCode() {
      return Objects.hash(id, name, callsite, parts, level, cached, parents,
          System.identityHashCode(deps));
    }
  }

  private static <V> Map<Integer, V> lru(int capacity) {
    return new LinkedHashMap<Integer, V>(256, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<Integer, V> e) {
        return size() > capacity;
      }
    };
  }

  /** Whether this attempt of the stage was described (the final order is set by sent()). */
  static synchronized boolean stage(int stage, int attempt) {
    Integer a = STAGE.get(stage);
    return a != null && a == attempt;
  }

  /** Whether the RDD was described as {@code d} says. */
  static synchronized boolean rdd(Rdd d) {
    return d.equals(RDD.get(d.id));
  }

  /**
   * A job start went out: its stages {@code [id, attempt]} in its order, and the RDDs of the
   * stages it described in theirs, become the most recently used, as the
   * brain's memory does for the same event.
   */
  static synchronized void sent(List<int[]> stages, List<Rdd> rdds) {
    for (int[] s : stages) {
      STAGE.put(s[0], s[1]); // access order: a put of a present key moves it to the end too
    }
    for (Rdd r : rdds) {
      RDD.put(r.id, r);
    }
  }

  static synchronized void reset() {
    STAGE.clear();
    RDD.clear();
  }
}
