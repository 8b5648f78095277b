package org.sparklrc;

import static org.sparklrc.BlockTable.LIST;
import static org.sparklrc.BlockTable.NEXT;
import static org.sparklrc.BlockTable.NONE;
import static org.sparklrc.BlockTable.PART;
import static org.sparklrc.BlockTable.PREV;
import static org.sparklrc.BlockTable.RDD;
import static org.sparklrc.BlockTable.STRIDE;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.RDDBlockId;

/**
 * The eviction order of PriorityEntries' blocks, kept in O(1) per block access: entries (of a
 * {@link BlockTable}) linked in lists, least recently used first (a use moves the entry to its
 * list's tail). While no table is in force there is one list, Spark's LRU order. Under a table
 * there is one list per distinct priority, the lists in a TreeMap by priority: the order is
 * (priority ascending, least recently used first). A table change re-keys only the changed RDDs'
 * blocks, found by key, merged into their new lists by access sequence. Guarded by the owning
 * map's monitor.
 */
final class PriorityIndex {
  /** The entries of one priority (or all, before any table), least recently used first. */
  static final class Bucket {
    final int id;
    final double priority;
    int head = NONE;
    int tail = NONE;
    int size;
    boolean dropped; // no longer in use (a Row may still cache it)

    Bucket(int id, double priority) {
      this.id = id;
      this.priority = priority;
    }
  }

  private final BlockTable t;
  private Bucket[] lists = new Bucket[8]; // by id (an entry's LIST)
  private int[] freeIds = new int[8];
  private int freeCount = 0;
  private int nextId = 0;
  private final TreeMap<Double, Bucket> order = new TreeMap<>();
  private final LongTable<Bucket> byPriority = new LongTable<>(); // keyed by doubleToLongBits
  /** One listed RDD: its priorities and the lists they map to (filled as blocks arrive), so a
   * put finds its list without a lookup by priority. */
  static final class Row {
    final double[] prio;
    final Bucket[] lists;

    Row(double[] prio) {
      this.prio = prio;
      this.lists = new Bucket[prio.length];
    }
  }

  /** The table's rows by RDD (listed RDDs only). */
  private final LongTable<Row> rows = new LongTable<>();
  private int lastRdd = NONE; // the row of the last RDD looked up (puts come RDD by RDD)
  private Row lastRow;
  private Bucket zero;        // the list of priority 0 (unlisted blocks), cached
  /** This executor's copies of blocks the brain moved to a GPU executor: first to evict here. */
  private final HashSet<BlockId> demoted = new HashSet<>();
  private boolean anyDemoted = false;
  private boolean indexed = false; // a table has been in force: one list per priority
  private final Bucket lru;        // the one list before that
  private long seq = 0;

  PriorityIndex(BlockTable t) {
    this.t = t;
    lru = newBucket(Double.NaN);
  }

  boolean indexed() {
    return indexed;
  }

  // ---------------------------------------------------------------- per block access

  /** Links a new entry at the tail of its list: its priority's, or the one LRU list. */
  void add(int e, BlockId key) {
    append(indexed ? listFor(e, key) : lru, e);
  }

  /** A new entry's list under the table: bucketFor(priorityOf(e, key)), cached per row. */
  private Bucket listFor(int e, BlockId key) {
    int base = e * STRIDE;
    int rdd = t.meta[base + RDD];
    if (rdd < 0 || anyDemoted) {
      return bucketFor(priorityOf(e, key));
    }
    int part = t.meta[base + PART];
    Row r = row(rdd);
    if (r == null || part < 0 || part >= r.prio.length) {
      Bucket z = zero;
      if (z == null || z.dropped) {
        zero = z = bucketFor(0.0);
      }
      return z;
    }
    Bucket b = r.lists[part];
    if (b == null || b.dropped) {
      b = bucketFor(r.prio[part]);
      r.lists[part] = b;
    }
    return b;
  }

  private Row row(int rdd) {
    if (rdd != lastRdd) {
      lastRow = rows.get(rdd);
      lastRdd = rdd;
    }
    return lastRow;
  }

  /** A use: the entry becomes the most recently used of its list. */
  void touch(int e) {
    int[] m = t.meta;
    Bucket b = lists[m[e * STRIDE + LIST]];
    t.setSeq(e, ++seq);
    if (b.tail != e) {
      unlink(b, e);
      append(b, e);
    }
  }

  /** Unlinks an entry from its list (an emptied priority list goes: walks skip no empty list). */
  void remove(int e) {
    Bucket b = lists[t.meta[e * STRIDE + LIST]];
    unlink(b, e);
    if (b.size == 0 && b != lru) {
      dropBucket(b);
    }
  }

  /** The entry's priority under the table in force (0 before one: Spark's order). */
  double priority(int e) {
    return indexed ? lists[t.meta[e * STRIDE + LIST]].priority : 0.0;
  }

  private void append(Bucket b, int e) {
    int[] m = t.meta;
    int base = e * STRIDE;
    m[base + LIST] = b.id;
    m[base + PREV] = b.tail;
    m[base + NEXT] = NONE;
    if (b.tail == NONE) {
      b.head = e;
    } else {
      m[b.tail * STRIDE + NEXT] = e;
    }
    b.tail = e;
    b.size++;
    t.setSeq(e, ++seq);
  }

  private void unlink(Bucket b, int e) {
    int[] m = t.meta;
    int base = e * STRIDE;
    int p = m[base + PREV];
    int n = m[base + NEXT];
    if (p == NONE) {
      b.head = n;
    } else {
      m[p * STRIDE + NEXT] = n;
    }
    if (n == NONE) {
      b.tail = p;
    } else {
      m[n * STRIDE + PREV] = p;
    }
    b.size--;
  }

  /** Inserts an unlinked entry after {@code at} (at the head when NONE), keeping its seq. */
  private void insertAfter(Bucket b, int at, int e) {
    int[] m = t.meta;
    int base = e * STRIDE;
    int n = at == NONE ? b.head : m[at * STRIDE + NEXT];
    m[base + LIST] = b.id;
    m[base + PREV] = at;
    m[base + NEXT] = n;
    if (n == NONE) {
      b.tail = e;
    } else {
      m[n * STRIDE + PREV] = e;
    }
    if (at == NONE) {
      b.head = e;
    } else {
      m[at * STRIDE + NEXT] = e;
    }
    b.size++;
  }

  // ---------------------------------------------------------------- priorities

  /** A block's priority: 0 for a non-RDD block (broadcast, ...: the table does not rank it, and
   * with the lru table's zeros it keeps Spark's own place), -infinity for a demoted copy, else
   * its RDD's table entry (0 when the table does not list it). */
  private double priorityOf(int e, BlockId key) {
    int base = e * STRIDE;
    int rdd = t.meta[base + RDD];
    if (rdd < 0) {
      return 0.0;
    }
    if (!demoted.isEmpty() && demoted.contains(key == null ? t.key(e) : key)) {
      return Double.NEGATIVE_INFINITY;
    }
    return tablePriority(rdd, t.meta[base + PART]);
  }

  /** The table's priority of an RDD block (0 when the table does not list it). */
  double tablePriority(int rdd, int part) {
    Row r = row(rdd);
    return r == null || part < 0 || part >= r.prio.length ? 0.0 : r.prio[part];
  }

  /** Replaces the demoted copies; returns the blocks whose priority may have changed. */
  Set<BlockId> setDemoted(Set<BlockId> blocks) {
    HashSet<BlockId> changed = new HashSet<>(demoted);
    for (BlockId b : blocks) {
      if (b instanceof RDDBlockId && !changed.remove(b)) {
        changed.add(b);
      }
    }
    demoted.clear();
    for (BlockId b : blocks) {
      if (b instanceof RDDBlockId) {
        demoted.add(b);
      }
    }
    anyDemoted = !demoted.isEmpty();
    return changed;
  }

  /** Sets whole arrays (null or empty: unlisted), then {@code partial} partition changes;
   * {@code reset} first unlists every RDD. Returns the blocks whose priority may have changed
   * (a whole array's partitions below its old or new length; the changed partitions), or null
   * when that is more than a rebuild's worth (the caller then rebuilds). */
  ArrayList<BlockId> setPriorities(Map<Integer, double[]> arrays,
      Map<Integer, Map<Integer, Double>> partial, boolean reset) {
    if (reset) {
      rows.clear();
    }
    lastRdd = NONE;
    lastRow = null;
    ArrayList<BlockId> changed = reset ? null : new ArrayList<>();
    long budget = t.size() / 8 + 64;
    for (Map.Entry<Integer, double[]> e : arrays.entrySet()) {
      double[] a = e.getValue() == null || e.getValue().length == 0 ? null : e.getValue();
      int rdd = e.getKey();
      Row old = rows.get(rdd);
      if (a == null) {
        rows.remove(rdd);
      } else {
        rows.put(rdd, new Row(a));
      }
      int parts = Math.max(old == null ? 0 : old.prio.length, a == null ? 0 : a.length);
      budget -= parts;
      changed = budget < 0 ? null : changed;
      for (int p = 0; changed != null && p < parts; p++) {
        changed.add(new RDDBlockId(rdd, p));
      }
    }
    for (Map.Entry<Integer, Map<Integer, Double>> e : partial.entrySet()) {
      int rdd = e.getKey();
      Row r = rows.get(rdd);
      for (Map.Entry<Integer, Double> c : e.getValue().entrySet()) {
        int p = c.getKey();
        if (r == null || p >= r.prio.length) { // not held at this size: a grown copy
          rows.put(rdd, r = new Row(TableCodec.updated(r == null ? null : r.prio, e.getValue())));
        }
        r.prio[p] = c.getValue(); // this row's own array (decoded for it): changed in place
        r.lists[p] = null;
        changed = --budget < 0 ? null : changed;
        if (changed != null) {
          changed.add(new RDDBlockId(rdd, p));
        }
      }
    }
    return changed;
  }

  // ---------------------------------------------------------------- table changes

  /** Moves the given blocks (if cached) whose priority changed into their new lists, each at its
   * access-sequence position, merged from the list's tail (recently used blocks move least). */
  void rekey(Iterable<BlockId> blocks) {
    if (!indexed) {
      return;
    }
    ArrayList<long[]> moved = new ArrayList<>();
    for (BlockId id : blocks) {
      int e = t.find(id);
      if (e == NONE) {
        continue;
      }
      double p = priorityOf(e, id);
      Bucket b = lists[t.meta[e * STRIDE + LIST]];
      if (Double.compare(p, b.priority) != 0) {
        remove(e);
        moved.add(new long[] {Double.doubleToLongBits(p), t.seq(e), e});
      }
    }
    // By new priority, then most recently used first.
    moved.sort((x, y) -> {
      int c = Double.compare(Double.longBitsToDouble(x[0]), Double.longBitsToDouble(y[0]));
      return c != 0 ? c : Long.compare(y[1], x[1]);
    });
    for (int i = 0, j; i < moved.size(); i = j) {
      double p = Double.longBitsToDouble(moved.get(i)[0]);
      j = i + 1;
      while (j < moved.size() && moved.get(j)[0] == moved.get(i)[0]) {
        j++;
      }
      merge(bucketFor(p), moved.subList(i, j));
    }
  }

  /** Inserts unlinked entries ({bits, seq, entry}, most recently used first) into {@code b} at
   * their access-sequence positions, in one pass from the end of the list nearer to them (their
   * seqs against the list's ends: they are spread about evenly over it). */
  private void merge(Bucket b, java.util.List<long[]> group) {
    long newest = group.get(0)[1];
    long oldest = group.get(group.size() - 1)[1];
    boolean fromTail = b.head == NONE
        || t.seq(b.tail) - oldest <= newest - t.seq(b.head);
    if (fromTail) {
      int at = b.tail;
      for (long[] mv : group) {
        while (at != NONE && t.seq(at) > mv[1]) {
          at = t.meta[at * STRIDE + PREV];
        }
        insertAfter(b, at, (int) mv[2]);
      }
      return;
    }
    int before = NONE; // the last entry older than the one to insert
    int at = b.head;
    for (int k = group.size() - 1; k >= 0; k--) {
      long[] mv = group.get(k);
      while (at != NONE && t.seq(at) < mv[1]) {
        before = at;
        at = t.meta[at * STRIDE + NEXT];
      }
      insertAfter(b, before, (int) mv[2]);
      before = (int) mv[2];
    }
  }

  /** Re-lists every entry under the table in force, in access-sequence order (a merge of the
   * current lists, each already in that order): O(n log lists). */
  void rebuild() {
    Bucket[] old = new Bucket[order.size() + 1];
    int k = 0;
    if (lru.size > 0) {
      old[k++] = lru;
    }
    for (Bucket b : order.values()) {
      old[k++] = b;
    }
    int[] cursor = new int[k];
    PriorityQueue<Integer> heads = new PriorityQueue<>(Math.max(1, k),
        (x, y) -> Long.compare(t.seq(cursor[x]), t.seq(cursor[y])));
    for (int i = 0; i < k; i++) {
      cursor[i] = old[i].head;
      heads.add(i);
    }
    clearBlocks();
    indexed = true;
    lastRdd = NONE;
    while (!heads.isEmpty()) {
      int i = heads.poll();
      int e = cursor[i];
      cursor[i] = t.meta[e * STRIDE + NEXT];
      if (cursor[i] != NONE) {
        heads.add(i);
      }
      Bucket b = bucketFor(priorityOf(e, null));
      long s = t.seq(e);
      append(b, e);
      t.setSeq(e, s); // a re-listing is not a use
    }
  }

  /** Forgets every entry (the table's arrays stay): empties the LRU list and drops every
   * priority list (their entries' links are left as they are: the caller re-lists or forgets
   * them). */
  void clearBlocks() {
    for (Bucket b : order.values()) {
      b.dropped = true;
      lists[b.id] = null;
    }
    order.clear();
    byPriority.clear();
    freeCount = 0;
    nextId = lru.id + 1;
    lru.head = lru.tail = NONE;
    lru.size = 0;
  }

  private Bucket bucketFor(double p) {
    long bits = Double.doubleToLongBits(p);
    Bucket b = byPriority.get(bits);
    if (b == null) {
      b = newBucket(p);
      byPriority.put(bits, b);
      order.put(p, b);
    }
    return b;
  }

  private Bucket newBucket(double p) {
    int id;
    if (freeCount > 0) {
      id = freeIds[--freeCount];
    } else {
      id = nextId++;
      if (id == lists.length) {
        lists = Arrays.copyOf(lists, id * 2);
      }
    }
    Bucket b = new Bucket(id, p);
    lists[id] = b;
    return b;
  }

  private void dropBucket(Bucket b) {
    b.dropped = true;
    order.remove(b.priority);
    byPriority.remove(Double.doubleToLongBits(b.priority));
    lists[b.id] = null;
    if (freeCount == freeIds.length) {
      freeIds = Arrays.copyOf(freeIds, freeCount * 2);
    }
    freeIds[freeCount++] = b.id;
  }

  // ---------------------------------------------------------------- walks

  /** Entries in eviction order: the LRU list before any table, else list by list from the
   * lowest priority. Each call of {@code next} returns the next entry or NONE. */
  interface Cursor {
    int next();
  }

  Cursor walk() {
    if (!indexed) {
      return new Cursor() {
        private int e = lru.head;

        @Override
        public int next() {
          int r = e;
          if (r != NONE) {
            e = t.meta[r * STRIDE + NEXT];
          }
          return r;
        }
      };
    }
    final java.util.Iterator<Bucket> it = order.values().iterator();
    return new Cursor() {
      private int e = it.hasNext() ? it.next().head : NONE;

      @Override
      public int next() {
        int r = e;
        if (r != NONE) {
          e = t.meta[r * STRIDE + NEXT];
          while (e == NONE && it.hasNext()) {
            e = it.next().head;
          }
        }
        return r;
      }
    };
  }

  /** [RDDs listed in the table, distinct priorities of cached blocks]. */
  int[] sizes() {
    return new int[] {rows.size(), order.size()};
  }

  /** RDDs listed in the table (for the state-size check). */
  boolean listed(int rdd) {
    return rows.get(rdd) != null;
  }
}
