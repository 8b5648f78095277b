package org.sparklrc;

import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.TaskContext;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.memory.MemoryEntry;

/**
 * Drop-in for MemoryStore's {@code entries} map. Behaves exactly like Spark's access-ordered
 * LinkedHashMap except that, once a priority table is in force, {@code entrySet()} iterates
 * blocks by (priority ascending, then least recently used first): the order in which
 * {@code evictBlocksToFreeSpace} picks victims. With no table (version 0) the iteration is
 * Spark's own LRU order. Priorities: RDD block -> table[rdd][partition], unlisted -> 0, non-RDD
 * blocks -> +infinity. Spark calls every method under this map's monitor; so do we.
 *
 * <p>The order is kept incrementally in a TreeSet keyed by (priority, access sequence), updated in
 * get/put/remove and re-keyed for the RDDs a table changes, so an eviction decision costs
 * O(k log n) for k visited blocks instead of a sort.
 */
public final class PriorityEntries extends LinkedHashMap<BlockId, MemoryEntry<?>> {
  private static final long serialVersionUID = 1L;

  /** One cached block in the ordered index; doubles as the Map.Entry the eviction walk sees. */
  static final class Node implements Map.Entry<BlockId, MemoryEntry<?>> {
    final BlockId key;
    final int rdd;   // -1 for non-RDD blocks
    final int part;
    MemoryEntry<?> value;
    double priority;
    long seq;

    Node(BlockId key, MemoryEntry<?> value) {
      this.key = key;
      this.value = value;
      if (key instanceof RDDBlockId) {
        this.rdd = ((RDDBlockId) key).rddId();
        this.part = ((RDDBlockId) key).splitIndex();
      } else {
        this.rdd = -1;
        this.part = -1;
      }
    }

    @Override
    public BlockId getKey() {
      return key;
    }

    @Override
    public MemoryEntry<?> getValue() {
      return value;
    }

    @Override
    public MemoryEntry<?> setValue(MemoryEntry<?> v) {
      throw new UnsupportedOperationException("read-only view");
    }
  }

  private static final Comparator<Node> ORDER = (a, b) -> {
    int c = Double.compare(a.priority, b.priority);
    return c != 0 ? c : Long.compare(a.seq, b.seq);
  };

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

  /** What one task did to the cache (reported at task end). */
  static final class TaskCounters {
    final LinkedHashSet<String> hits = new LinkedHashSet<>();
    final LinkedHashSet<String> puts = new LinkedHashSet<>();
    final LinkedHashSet<String> evicted = new LinkedHashSet<>();
    final List<Eviction> evictions = new ArrayList<>();
    private int unattributed = 0; // evictions[unattributed..] wait for the next put

    void evicted(Eviction e) {
      evicted.add(e.block);
      evictions.add(e);
    }

    /** The task stored {@code block}: the evictions not yet attributed made room for it. */
    void stored(String block) {
      for (; unattributed < evictions.size(); unattributed++) {
        evictions.get(unattributed).forBlock = block;
      }
    }
  }

  // Ordered index (guarded by this).
  private transient HashMap<BlockId, Node> nodes = new HashMap<>();
  private transient TreeSet<Node> order = new TreeSet<>(ORDER);
  private transient HashMap<Integer, HashSet<Node>> byRdd = new HashMap<>();
  private long seqCounter = 0;

  // Table in force (guarded by this).
  private long version = 0;
  private final HashMap<Integer, double[]> table = new HashMap<>();
  private final HashSet<Integer> planned = new HashSet<>();
  /** This executor's copies of blocks the brain moved to a GPU executor: first to evict here. */
  private final HashSet<BlockId> demoted = new HashSet<>();

  // Accounting.
  private final transient ConcurrentHashMap<Long, TaskCounters> tasks = new ConcurrentHashMap<>();
  /** Blocks the current thread's last eviction walk yielded: their get/remove is eviction, not use. */
  private final transient ThreadLocal<HashSet<BlockId>> walked =
      ThreadLocal.withInitial(HashSet::new);
  /** Whether that walk followed a table (priority order) or Spark's LRU order. */
  private final transient ThreadLocal<Boolean> walkOrdered = ThreadLocal.withInitial(() -> false);
  private long evictedTotal = 0;

  public PriorityEntries() {
    super(32, 0.75f, true);
  }

  // ---------------------------------------------------------------- table

  /** Table version in force (0 = none: Spark's LRU order). */
  public synchronized long version() {
    return version;
  }

  public synchronized boolean isPlanned(int stage) {
    return planned.contains(stage);
  }

  /**
   * Applies a table delta atomically: arrays of changed RDDs (empty array = remove), newly planned
   * stages and the new version; {@code reset} first forgets the whole table.
   */
  public synchronized void applyTable(long newVersion, boolean reset, Map<Integer, double[]> arrays,
      Collection<Integer> plannedStages) {
    if (reset) {
      table.clear();
      planned.clear();
    }
    for (Map.Entry<Integer, double[]> e : arrays.entrySet()) {
      if (e.getValue() == null || e.getValue().length == 0) {
        table.remove(e.getKey());
      } else {
        table.put(e.getKey(), e.getValue());
      }
    }
    int affected = 0;
    if (!reset) {
      for (Integer rdd : arrays.keySet()) {
        HashSet<Node> ns = byRdd.get(rdd);
        affected += ns == null ? 0 : ns.size();
      }
    }
    if (reset || affected > order.size() / 8) {
      rebuildOrder(); // large change: O(n log n) array sort + O(n) tree build
    } else {
      for (Integer rdd : arrays.keySet()) {
        HashSet<Node> ns = byRdd.get(rdd);
        if (ns == null) {
          continue;
        }
        for (Node n : ns) {
          double p = priorityOf(n);
          if (Double.compare(p, n.priority) != 0) {
            order.remove(n);
            n.priority = p;
            order.add(n);
          }
        }
      }
    }
    if (plannedStages != null) {
      planned.addAll(plannedStages);
    }
    version = Math.max(version, newVersion);
  }

  /** Recomputes every priority and rebuilds the TreeSet from a sorted array in linear time. */
  private void rebuildOrder() {
    final Node[] all = nodes.values().toArray(new Node[0]);
    for (Node n : all) {
      n.priority = priorityOf(n);
    }
    java.util.Arrays.sort(all, ORDER);
    TreeSet<Node> fresh = new TreeSet<>(ORDER);
    fresh.addAll(new SortedArrayView(all)); // TreeMap.buildFromSorted: no comparisons
    order = fresh;
  }

  /** Just enough of a SortedSet over a sorted array for TreeSet.addAll's linear-time path. */
  private static final class SortedArrayView extends AbstractSet<Node>
      implements java.util.SortedSet<Node> {
    private final Node[] a;

    SortedArrayView(Node[] a) {
      this.a = a;
    }

    @Override
    public Iterator<Node> iterator() {
      return java.util.Arrays.asList(a).iterator();
    }

    @Override
    public int size() {
      return a.length;
    }

    @Override
    public Comparator<? super Node> comparator() {
      return ORDER;
    }

    @Override
    public java.util.SortedSet<Node> subSet(Node from, Node to) {
      throw new UnsupportedOperationException();
    }

    @Override
    public java.util.SortedSet<Node> headSet(Node to) {
      throw new UnsupportedOperationException();
    }

    @Override
    public java.util.SortedSet<Node> tailSet(Node from) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Node first() {
      return a[0];
    }

    @Override
    public Node last() {
      return a[a.length - 1];
    }
  }

  private double priorityOf(Node n) {
    if (n.rdd < 0) {
      return Double.POSITIVE_INFINITY;
    }
    if (demoted.contains(n.key)) {
      return Double.NEGATIVE_INFINITY;
    }
    return tablePriority(n.rdd, n.part);
  }

  /** The table's priority of an RDD block (0 when the table does not list it). */
  public synchronized double tablePriority(int rdd, int part) {
    double[] arr = table.get(rdd);
    if (arr == null || part < 0 || part >= arr.length) {
      return 0.0;
    }
    return arr[part];
  }

  /**
   * Executor-local override: these blocks' copies here go first on eviction (the brain moved
   * them to a GPU executor); every other block keeps the table's priority.
   */
  public synchronized void setDemoted(Set<BlockId> blocks) {
    HashSet<BlockId> changed = new HashSet<>(demoted);
    changed.addAll(blocks);
    demoted.clear();
    demoted.addAll(blocks);
    for (BlockId id : changed) {
      Node n = nodes.get(id);
      if (n != null) {
        double p = priorityOf(n);
        if (Double.compare(p, n.priority) != 0) {
          order.remove(n);
          n.priority = p;
          order.add(n);
        }
      }
    }
  }

  /**
   * Bytes an insert of a block of {@code rdd} with priority {@code priority} could take without
   * evicting a block ranked at or above it: the on-heap blocks of other RDDs ranked below it.
   */
  public synchronized long roomBelow(double priority, int rdd) {
    long room = 0;
    for (Node n : order) {
      if (!(n.priority < priority)) {
        break;
      }
      if (n.rdd != rdd && n.value != null
          && n.value.memoryMode() == org.apache.spark.memory.MemoryMode.ON_HEAP) {
        room += n.value.size();
      }
    }
    return room;
  }

  /** Priority of a cached block under the table in force (for tests / diagnostics). */
  public synchronized double priority(BlockId id) {
    Node n = nodes.get(id);
    return n == null ? Double.NaN : n.priority;
  }

  // ---------------------------------------------------------------- accounting

  void taskStarted(long taskAttemptId) {
    tasks.put(taskAttemptId, new TaskCounters());
  }

  /** Tasks between taskStarted and taskEnded on this executor. */
  int runningTasks() {
    return tasks.size();
  }

  TaskCounters taskEnded(long taskAttemptId) {
    walked.get().clear();
    return tasks.remove(taskAttemptId);
  }

  public synchronized long evictedTotal() {
    return evictedTotal;
  }

  private static TaskCounters countersOrNull(ConcurrentHashMap<Long, TaskCounters> tasks) {
    TaskContext tc = TaskContext.get();
    return tc == null ? null : tasks.get(tc.taskAttemptId());
  }

  // ---------------------------------------------------------------- Map methods Spark calls

  @Override
  public synchronized MemoryEntry<?> get(Object key) {
    MemoryEntry<?> v = super.get(key);
    if (v != null) {
      Node n = nodes.get(key);
      if (n != null) {
        order.remove(n);
        n.seq = ++seqCounter;
        order.add(n);
      }
      if (key instanceof RDDBlockId && !walked.get().contains(key)) {
        TaskCounters c = countersOrNull(tasks);
        if (c != null && !c.puts.contains(((BlockId) key).name())) {
          c.hits.add(((BlockId) key).name());
        }
      }
    }
    return v;
  }

  @Override
  public synchronized MemoryEntry<?> put(BlockId key, MemoryEntry<?> value) {
    MemoryEntry<?> old = super.put(key, value);
    Node n = nodes.get(key);
    if (n == null) {
      n = new Node(key, value);
      n.priority = priorityOf(n);
      nodes.put(key, n);
      if (n.rdd >= 0) {
        byRdd.computeIfAbsent(n.rdd, k -> new HashSet<>()).add(n);
      }
    } else {
      order.remove(n);
      n.value = value;
    }
    n.seq = ++seqCounter;
    order.add(n);
    walked.get().clear();
    TaskCounters c = countersOrNull(tasks);
    if (c != null) {
      if (key instanceof RDDBlockId) {
        c.puts.add(key.name());
      }
      c.stored(key.name()); // e.g. rdd_5_2, or broadcast_3_piece0 for a non-RDD block
    }
    return old;
  }

  @Override
  public synchronized MemoryEntry<?> remove(Object key) {
    MemoryEntry<?> old = super.remove(key);
    Node n = nodes.remove(key);
    if (n != null) {
      order.remove(n);
      if (n.rdd >= 0) {
        HashSet<Node> ns = byRdd.get(n.rdd);
        if (ns != null) {
          ns.remove(n);
          if (ns.isEmpty()) {
            byRdd.remove(n.rdd);
          }
        }
      }
    }
    if (old != null && walked.get().remove(key)) {
      evictedTotal++;
      if (key instanceof RDDBlockId) {
        TaskCounters c = countersOrNull(tasks);
        if (c != null) {
          boolean ordered = walkOrdered.get();
          c.evicted(new Eviction(((BlockId) key).name(), ordered ? "priority" : "lru",
              ordered && n != null ? n.priority : Double.NaN));
        }
      }
    }
    return old;
  }

  @Override
  public synchronized void clear() {
    super.clear();
    nodes.clear();
    order.clear();
    byRdd.clear();
  }

  /**
   * The eviction walk's view: Spark's LRU order while no table is in force, else (priority,
   * access order). Read-only; records what it yields so the following drop is seen as an eviction.
   */
  @Override
  public Set<Map.Entry<BlockId, MemoryEntry<?>>> entrySet() {
    final boolean ordered;
    synchronized (this) {
      ordered = version > 0;
    }
    final Set<Map.Entry<BlockId, MemoryEntry<?>>> lru = ordered ? null : super.entrySet();
    return new AbstractSet<Map.Entry<BlockId, MemoryEntry<?>>>() {
      @Override
      public int size() {
        return PriorityEntries.this.size();
      }

      @Override
      public Iterator<Map.Entry<BlockId, MemoryEntry<?>>> iterator() {
        final HashSet<BlockId> seen = walked.get();
        seen.clear();
        walkOrdered.set(ordered);
        final Iterator<? extends Map.Entry<BlockId, MemoryEntry<?>>> it =
            ordered ? order.iterator() : lru.iterator();
        return new Iterator<Map.Entry<BlockId, MemoryEntry<?>>>() {
          @Override
          public boolean hasNext() {
            return it.hasNext();
          }

          @Override
          public Map.Entry<BlockId, MemoryEntry<?>> next() {
            Map.Entry<BlockId, MemoryEntry<?>> e = it.next();
            seen.add(e.getKey());
            return e;
          }
        };
      }
    };
  }

  /** Copies another map's entries in its iteration (LRU) order; call under its monitor. */
  void copyFrom(Map<BlockId, MemoryEntry<?>> old) {
    for (Map.Entry<BlockId, MemoryEntry<?>> e : old.entrySet()) {
      put(e.getKey(), e.getValue());
    }
    walked.get().clear();
  }
}
