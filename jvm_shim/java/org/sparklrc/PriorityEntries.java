package org.sparklrc;

import java.util.AbstractCollection;
import java.util.AbstractSet;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.TaskContext;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.memory.MemoryEntry;
import org.sparklrc.PriorityIndex.Node;

/**
 * Drop-in for MemoryStore's {@code entries} map. Behaves exactly like Spark's access-ordered
 * LinkedHashMap except that, once a priority table is in force, {@code entrySet()} iterates
 * blocks by (priority ascending, then least recently used first): the order in which
 * {@code evictBlocksToFreeSpace} picks victims. With no table (version 0) the iteration is
 * Spark's own LRU order. Priorities: RDD block -> table[rdd][partition], unlisted -> 0, non-RDD
 * blocks -> +infinity. Spark calls every method under this map's monitor; so do we.
 *
 * <p>get/put/remove run for every block a task reads or writes, so they must cost what Spark's
 * own map costs: the LinkedHashMap stores each block's {@link Node} as its value (one hash lookup
 * per call, as in Spark; the methods that hand values out unwrap them), the order under a table
 * is kept in O(1) per call ({@link PriorityIndex}, not kept before the first table), and a task's
 * accounting is an append to its log ({@link TaskCounters}). An eviction decision costs O(k) for
 * the k blocks it visits.
 */
public final class PriorityEntries extends LinkedHashMap<BlockId, MemoryEntry<?>> {
  private static final long serialVersionUID = 1L;
  /** Stages whose plan this executor remembers (older ones are forgotten: bounded state). */
  static final int RECENT_PLANNED = 1024;

  // Table in force and the order it defines (guarded by this).
  private transient PriorityIndex index = new PriorityIndex();
  private boolean indexed = false; // the index is kept: a table has been in force
  private long seqCounter = 0;
  private long version = 0;
  private final LinkedHashMap<Integer, Boolean> planned = new LinkedHashMap<Integer, Boolean>() {
    private static final long serialVersionUID = 1L;

    @Override
    protected boolean removeEldestEntry(Map.Entry<Integer, Boolean> eldest) {
      return size() > RECENT_PLANNED;
    }
  };

  // Accounting.
  private final transient ConcurrentHashMap<Long, TaskCounters> tasks = new ConcurrentHashMap<>();
  private int taskGen = 0; // changes whenever a task starts or ends (guarded by this)
  private transient Thread countedThread; // counters(): the last thread's task, while taskGen holds
  private transient TaskCounters countedTask;
  private int countedGen = -1;
  /** Blocks the current thread's last eviction walk yielded: their get/remove is eviction, not use. */
  private final transient ThreadLocal<HashSet<Node>> walked =
      ThreadLocal.withInitial(HashSet::new);
  /** Whether that walk followed a table (priority order) or Spark's LRU order. */
  private final transient ThreadLocal<Boolean> walkOrdered = ThreadLocal.withInitial(() -> false);
  private int walkMarks = 0; // sum of Node.walks: 0 = no walk pending, skip the thread-local
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
    return planned.containsKey(stage);
  }

  /**
   * Applies a table delta atomically: arrays of changed RDDs (empty array = remove), newly planned
   * stages and the new version; {@code reset} first forgets the whole table.
   */
  public synchronized void applyTable(long newVersion, boolean reset, Map<Integer, double[]> arrays,
      Collection<Integer> plannedStages) {
    if (reset) {
      planned.clear();
    }
    int affected = index.setPriorities(arrays, reset);
    if (plannedStages != null) {
      for (Integer stage : plannedStages) {
        planned.put(stage, Boolean.TRUE);
      }
    }
    version = Math.max(version, newVersion);
    if (version == 0) {
      return; // still no table: Spark's order, nothing to index
    }
    if (!indexed || reset || affected > size() / 8) {
      index.rebuild(super.values()); // O(n): Spark's LRU order is access-sequence order
      indexed = true;
    } else {
      index.rekey(arrays.keySet());
    }
  }

  /** The table's priority of an RDD block (0 when the table does not list it). */
  public synchronized double tablePriority(int rdd, int part) {
    return index.tablePriority(rdd, part);
  }

  /**
   * Executor-local override: these blocks' copies here go first on eviction (the brain moved
   * them to a GPU executor); every other block keeps the table's priority.
   */
  public synchronized void setDemoted(Set<BlockId> blocks) {
    Set<Integer> changed = index.setDemoted(blocks);
    if (indexed) {
      index.rekey(changed);
    }
  }

  /**
   * Bytes an insert of a block of {@code rdd} with priority {@code priority} could take without
   * evicting a block ranked at or above it: the on-heap blocks of other RDDs ranked below it.
   */
  public synchronized long roomBelow(double priority, int rdd) {
    long room = 0;
    Iterator<Node> nodes = indexed ? index.walk() : lruNodes();
    while (nodes.hasNext()) {
      Node n = nodes.next();
      double p = indexed ? n.priority : n.rdd < 0 ? Double.POSITIVE_INFINITY : 0.0;
      if (!(p < priority)) {
        if (indexed) {
          break;  // the walk is in priority order
        }
        continue;
      }
      if (n.rdd != rdd && n.value != null
          && n.value.memoryMode() == org.apache.spark.memory.MemoryMode.ON_HEAP) {
        room += n.value.size();
      }
    }
    return room;
  }

  /** Priority of a cached block under the table in force (for tests / diagnostics; O(n)). */
  public synchronized double priority(BlockId id) {
    for (MemoryEntry<?> v : super.values()) {
      Node n = (Node) v;
      if (n.key.equals(id)) {
        return indexed ? n.priority : n.rdd < 0 ? Double.POSITIVE_INFINITY : 0.0;
      }
    }
    return Double.NaN;
  }

  /** Entries of the side state (a bounded-state check): [RDDs in the table or with cached
   * blocks, distinct priorities of cached blocks, planned stages remembered, tasks counted, RDD
   * blocks cached (the rest of size() are Spark's broadcast and other blocks)]. */
  public synchronized int[] stateSizes() {
    int[] s = index.sizes();
    int rddBlocks = 0;
    for (BlockId id : super.keySet()) {
      rddBlocks += id instanceof org.apache.spark.storage.RDDBlockId ? 1 : 0;
    }
    return new int[] {s[0], s[1], planned.size(), tasks.size(), rddBlocks};
  }

  // ---------------------------------------------------------------- accounting

  void taskStarted(long taskAttemptId) {
    tasks.put(taskAttemptId, new TaskCounters());
    synchronized (this) {
      taskGen++;
    }
  }

  /** Tasks between taskStarted and taskEnded on this executor. */
  int runningTasks() {
    return tasks.size();
  }

  /** The task's report (null if it was not counted). */
  TaskCounters taskEnded(long taskAttemptId) {
    synchronized (this) {
      taskGen++;
      if (walkMarks > 0) {
        clearWalk();
      }
      TaskCounters c = tasks.remove(taskAttemptId);
      return c == null ? null : c.finish();
    }
  }

  public synchronized long evictedTotal() {
    return evictedTotal;
  }

  /** The calling thread's task counters, or null (under the monitor; one lookup per thread and
   * task, not per call). */
  private TaskCounters counters() {
    Thread t = Thread.currentThread();
    if (t != countedThread || countedGen != taskGen) {
      TaskContext tc = TaskContext.get();
      countedTask = tc == null ? null : tasks.get(tc.taskAttemptId());
      countedThread = t;
      countedGen = taskGen;
    }
    return countedTask;
  }

  /** Forgets the current thread's walk (under the monitor). */
  private void clearWalk() {
    HashSet<Node> seen = walked.get();
    for (Node n : seen) {
      n.walks--;
    }
    walkMarks -= seen.size();
    seen.clear();
  }

  // ---------------------------------------------------------------- Map methods Spark calls

  @Override
  public synchronized MemoryEntry<?> get(Object key) {
    Node n = (Node) super.get(key);
    if (n == null) {
      return null;
    }
    n.seq = ++seqCounter;
    if (n.bucket != null) {
      PriorityIndex.touched(n);
    }
    if (n.rdd >= 0 && (n.walks == 0 || !walked.get().contains(n))) {
      TaskCounters c = counters();
      if (c != null) {
        c.read(n.key);
      }
    }
    return n.value;
  }

  @Override
  public synchronized MemoryEntry<?> put(BlockId key, MemoryEntry<?> value) {
    Node n = new Node(key, value);
    Node old = (Node) super.put(key, n);
    MemoryEntry<?> previous = null;
    if (old == null) {
      n.seq = ++seqCounter;
      if (indexed) {
        index.add(n);
      }
    } else { // stored again (MemoryStore never does): keep the node, as a use
      super.put(key, old);
      previous = old.value;
      old.value = value;
      old.seq = ++seqCounter;
      if (old.bucket != null) {
        PriorityIndex.touched(old);
      }
    }
    if (walkMarks > 0) {
      clearWalk();
    }
    TaskCounters c = counters();
    if (c != null) {
      c.stored(key);
    }
    return previous;
  }

  @Override
  public synchronized MemoryEntry<?> remove(Object key) {
    Node n = (Node) super.remove(key);
    if (n == null) {
      return null;
    }
    if (n.bucket != null) {
      index.remove(n);
    }
    if (n.walks > 0 && walked.get().remove(n)) {
      n.walks--;
      walkMarks--;
      evictedTotal++;
      if (n.rdd >= 0) {
        TaskCounters c = counters();
        if (c != null) {
          boolean ordered = walkOrdered.get();
          c.evicted(new TaskCounters.Eviction(n.key.name(), ordered ? "priority" : "lru",
              ordered ? n.priority : Double.NaN));
        }
      }
    }
    return n.value;
  }

  @Override
  public synchronized boolean containsValue(Object value) {
    for (MemoryEntry<?> v : super.values()) {
      if (java.util.Objects.equals(((Node) v).value, value)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public synchronized MemoryEntry<?> getOrDefault(Object key, MemoryEntry<?> dflt) {
    return containsKey(key) ? get(key) : dflt;
  }

  @Override
  public synchronized MemoryEntry<?> putIfAbsent(BlockId key, MemoryEntry<?> value) {
    return containsKey(key) ? get(key) : put(key, value);
  }

  @Override
  public synchronized void putAll(Map<? extends BlockId, ? extends MemoryEntry<?>> m) {
    for (Map.Entry<? extends BlockId, ? extends MemoryEntry<?>> e : m.entrySet()) {
      put(e.getKey(), e.getValue());
    }
  }

  @Override
  public synchronized void clear() {
    super.clear();
    index.clearBlocks();
  }

  /** The stored values (MemoryStore.clear() disposes them), unwrapped; read-only. */
  @Override
  public Collection<MemoryEntry<?>> values() {
    final Collection<MemoryEntry<?>> nodes = super.values();
    return new AbstractCollection<MemoryEntry<?>>() {
      @Override
      public int size() {
        return nodes.size();
      }

      @Override
      public Iterator<MemoryEntry<?>> iterator() {
        final Iterator<MemoryEntry<?>> it = nodes.iterator();
        return new Iterator<MemoryEntry<?>>() {
          @Override
          public boolean hasNext() {
            return it.hasNext();
          }

          @Override
          public MemoryEntry<?> next() {
            return ((Node) it.next()).value;
          }
        };
      }
    };
  }

  /**
   * The eviction walk's view: Spark's LRU order while no table is in force, else (priority,
   * access order). Read-only; records what it yields so the following drop is seen as an eviction.
   */
  @Override
  public Set<Map.Entry<BlockId, MemoryEntry<?>>> entrySet() {
    return new AbstractSet<Map.Entry<BlockId, MemoryEntry<?>>>() {
      @Override
      public int size() {
        return PriorityEntries.this.size();
      }

      @Override
      public Iterator<Map.Entry<BlockId, MemoryEntry<?>>> iterator() {
        synchronized (PriorityEntries.this) {
          if (walkMarks > 0) {
            clearWalk();
          }
          walkOrdered.set(indexed);
          return new Walk(indexed ? index.walk() : lruNodes());
        }
      }
    };
  }

  @SuppressWarnings("unchecked")
  private Iterator<Node> lruNodes() {
    return (Iterator<Node>) (Iterator<?>) super.values().iterator();
  }

  /** Yields nodes, marking each as walked by this thread (Spark walks under the map's monitor
   * and changes nothing meanwhile). */
  private final class Walk implements Iterator<Map.Entry<BlockId, MemoryEntry<?>>> {
    private final Iterator<Node> nodes;
    private final HashSet<Node> seen = walked.get();

    Walk(Iterator<Node> nodes) {
      this.nodes = nodes;
    }

    @Override
    public boolean hasNext() {
      return nodes.hasNext();
    }

    @Override
    public Map.Entry<BlockId, MemoryEntry<?>> next() {
      Node n = nodes.next();
      synchronized (PriorityEntries.this) {
        if (seen.add(n)) {
          n.walks++;
          walkMarks++;
        }
      }
      return n;
    }
  }

  /** Copies another map's entries in its iteration (LRU) order; call under its monitor. */
  void copyFrom(Map<BlockId, MemoryEntry<?>> old) {
    for (Map.Entry<BlockId, MemoryEntry<?>> e : old.entrySet()) {
      put(e.getKey(), e.getValue());
    }
  }
}
