package org.sparklrc;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The stages a job_start event already described (stage id -> attempt), so that a later job
 * start names them by id only: Spark re-lists every stage of a job, skipped ones included, and
 * an iterative application's jobs grow with its lineage while only a few stages are new.
 *
 * <p>Bounded, least recently used out. The brain's memory ({@code spark_plugin/events.py},
 * {@code StageMemory}) sees the same job starts in the same order and holds at least
 * {@link #CAPACITY} stages, so it holds every stage this one does (LRU's inclusion property).
 * Lost events break that: the buffer's reset and its resynchronisation cut forget everything
 * here too (EventBuffer), so the next job starts describe their stages again.
 */
final class KnownStages {
  static final int CAPACITY = 4096;

  private static final Map<Integer, Integer> STAGES =
      new LinkedHashMap<Integer, Integer>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, Integer> e) {
          return size() > CAPACITY;
        }
      };

  private KnownStages() {}

  /** Whether this attempt of the stage was described (no change to the order). */
  static synchronized boolean described(int stage, int attempt) {
    Integer a = STAGES.get(stage);
    return a != null && a == attempt;
  }

  /**
   * A job start's stages {@code [id, attempt]}, in its order, went out: each becomes the most
   * recently used, as the brain's memory does for the same event.
   */
  static synchronized void sent(List<int[]> stages) {
    for (int[] s : stages) {
      STAGES.put(s[0], s[1]); // access order: a put of a present key moves it to the end too
    }
  }

  static synchronized void reset() {
    STAGES.clear();
  }
}
