package org.sparklrc;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.memory.MemoryEntry;

/**
 * What one task did to the cache, reported at task end. The map's per-call paths only append the
 * BlockId to a log (no name strings, no set lookups: a block read must cost what Spark's own map
 * costs); {@link #finish()} turns the log into the report's sets once, at task end.
 */
final class TaskCounters {
  /** One eviction and why: the order that picked it and the block whose insert needed room. */
  static final class Eviction {
    final String block;
    /** "priority" when a table was in force (lowest priority first, ties least recently used
     * first; RDDs the table does not list have priority 0), "lru" when none was (Spark's order). */
    final String order;
    final double priority;
    /** The block this task put next (the one the room was made for); null if none followed,
     * e.g. an unroll that failed or execution memory taking storage memory back. */
    String forBlock;

    Eviction(String block, String order, double priority) {
      this.block = block;
      this.order = order;
      this.priority = priority;
    }
  }

  private static final byte GET = 0;
  private static final byte PUT = 1;
  private static final byte EVICT = 2;

  // The log, in call order (appended under the map's monitor).
  private Object[] items = new Object[16];
  private byte[] kinds = new byte[16];
  private long[] counts = new long[16]; // a PUT's element count (ValueCount)
  private int n = 0;
  // Serialized stores to count after the task: block, entry, block, entry, ... (ValueCount.LATER)
  private final List<Object> later = new ArrayList<>(0);

  // The report (filled by finish()).
  final LinkedHashSet<String> hits = new LinkedHashSet<>();
  final LinkedHashSet<String> puts = new LinkedHashSet<>();
  /** Per entry of {@code puts}, in its order: the values the stored block holds, -1 if not known
   * (ValueCount; a serialized level's are counted by {@link #countLater()}). */
  final List<Long> putElements = new ArrayList<>();
  final LinkedHashSet<String> evicted = new LinkedHashSet<>();
  final List<Eviction> evictions = new ArrayList<>();

  private void log(byte kind, Object item, long count) {
    if (n == items.length) {
      items = java.util.Arrays.copyOf(items, n * 2);
      kinds = java.util.Arrays.copyOf(kinds, n * 2);
      counts = java.util.Arrays.copyOf(counts, n * 2);
    }
    items[n] = item;
    counts[n] = count;
    kinds[n++] = kind;
  }

  /** The task read a cached RDD block (not as part of an eviction). */
  void read(BlockId id) {
    log(GET, id, 0);
  }

  /** The task stored a block of {@code elements} values (ValueCount.atStore); the evictions
   * before it made room for it. */
  void stored(BlockId id, long elements, MemoryEntry<?> value) {
    log(PUT, id, elements);
    if (elements == ValueCount.LATER) {
      later.add(id);
      later.add(value);
    }
  }

  void evicted(Eviction e) {
    log(EVICT, e, 0);
  }

  /** Builds the report from the log: a read is a hit unless the task stored the block before;
   * each eviction is for the next block stored. Idempotent. */
  TaskCounters finish() {
    int unattributed = evictions.size();
    for (int i = 0; i < n; i++) {
      Object x = items[i];
      switch (kinds[i]) {
        case GET: {
          String name = ((BlockId) x).name();
          if (!puts.contains(name)) {
            hits.add(name);
          }
          break;
        }
        case PUT: {
          String name = ((BlockId) x).name(); // e.g. rdd_5_2, or broadcast_3_piece0
          if (x instanceof RDDBlockId && puts.add(name)) {
            putElements.add(counts[i]);
          }
          for (; unattributed < evictions.size(); unattributed++) {
            evictions.get(unattributed).forBlock = name;
          }
          break;
        }
        default: {
          Eviction e = (Eviction) x;
          evicted.add(e.block);
          evictions.add(e);
        }
      }
    }
    n = 0;
    return this;
  }

  /** After {@link #finish()}, outside the map's monitor: counts the values of the serialized
   * blocks the task stored (ValueCount.read; the first store of a block in the task). */
  void countLater() {
    if (later.isEmpty()) {
      return;
    }
    java.util.Map<String, Integer> index = new java.util.HashMap<>();
    for (String name : puts) {
      index.put(name, index.size());
    }
    for (int i = 0; i < later.size(); i += 2) {
      BlockId id = (BlockId) later.get(i);
      Integer at = index.get(id.name());
      if (at != null && putElements.get(at) == ValueCount.LATER) {
        putElements.set(at, ValueCount.read(id, later.get(i + 1)));
      }
    }
    later.clear();
    putElements.replaceAll(v -> v == ValueCount.LATER ? ValueCount.UNKNOWN : v);
  }
}
