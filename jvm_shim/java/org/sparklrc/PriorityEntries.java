package org.sparklrc;

import static org.sparklrc.BlockTable.NONE;
import static org.sparklrc.BlockTable.RDD;
import static org.sparklrc.BlockTable.STRIDE;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.apache.spark.TaskContext;
import org.apache.spark.memory.MemoryMode;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.memory.MemoryEntry;

/**
 * Drop-in for MemoryStore's {@code entries} map. Behaves exactly like Spark's access-ordered
 * LinkedHashMap except that, once a priority table is in force, {@code entrySet()} iterates
 * blocks by (priority ascending, then least recently used first): the order in which
 * {@code evictBlocksToFreeSpace} picks victims. With no table (version 0) the iteration is
 * Spark's own LRU order. Priorities: RDD block -> table[rdd][partition]; a block the table does
 * not rank (an unlisted RDD, a broadcast or any other non-RDD block) -> 0, so that a table of
 * zeros (lru) keeps Spark's order exactly and a stale broadcast goes before every block the DAG
 * will read again. Spark calls every method under this map's monitor; so does the plugin
 * (the per-access methods rely on it, the others take it themselves).
 *
 * <p>get/put/remove run for every block a task reads or writes, so they must cost what Spark's
 * own map costs. The type stays a LinkedHashMap (MemoryStore's field type), but the inherited
 * storage is never used: every Map method is overridden over a {@link BlockTable} (an RDD block
 * is found by its two ints, no per-block object) whose entries {@link PriorityIndex} keeps in
 * eviction order in O(1) per call; a task's accounting is an append to its log
 * ({@link TaskCounters}). An eviction decision costs O(k) for the k blocks it visits.
 */
public final class PriorityEntries extends OwnStorageMap {
  private static final long serialVersionUID = 1L;
  /** Stages whose plan this executor remembers (older ones are forgotten: bounded state). */
  static final int RECENT_PLANNED = 1024;

  // The blocks and their order (guarded by this).
  private final transient BlockTable table = new BlockTable();
  private final transient PriorityIndex index = new PriorityIndex(table);
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
  private final transient WalkMarks walks = new WalkMarks(table);
  private long evictedTotal = 0;
  private final transient CopyGuard copies = new CopyGuard();
  private final transient Admission admission = new Admission();
  private volatile boolean countValues;

  public PriorityEntries() {
    super();
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
    applyTable(newVersion, reset, arrays, Collections.emptyMap(), plannedStages);
  }

  /** As above, with {@code partial}: partition changes of RDDs whose arrays this table holds. */
  public synchronized void applyTable(long newVersion, boolean reset, Map<Integer, double[]> arrays,
      Map<Integer, Map<Integer, Double>> partial, Collection<Integer> plannedStages) {
    if (reset) {
      planned.clear();
    }
    ArrayList<BlockId> changed = index.setPriorities(arrays, partial, reset);
    if (plannedStages != null) {
      for (Integer stage : plannedStages) {
        planned.put(stage, Boolean.TRUE);
      }
    }
    version = Math.max(version, newVersion);
    if (version == 0) {
      return; // still no table: Spark's order, nothing to index
    }
    if (!index.indexed() || changed == null) {
      index.rebuild(); // O(n log lists): a merge of the lists by access sequence
    } else {
      index.rekey(changed);
    }
  }

  /** Whether stores of serialized blocks report their values ({@code spark.lrc.countValues};
   * ValueCount). */
  public void setCountValues(boolean on) {
    countValues = on;
  }

  public boolean countValuesOn() {
    return countValues;
  }

  /** Admission on or off ({@code spark.lrc.admit}; Admission). */
  public void setAdmit(boolean admit) {
    admission.set(admit);
  }

  /** Whether stores are admitted by rank (what {@code setAdmit} last set). */
  public boolean admitOn() {
    return admission.on();
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
    index.rekey(index.setDemoted(blocks));
  }

  /** A GPU placement copy of this block is on its way: its put may evict only blocks ranked
   * below it ({@link CopyGuard}), until {@link #copyDone}. */
  public synchronized void expectCopy(RDDBlockId block) {
    copies.expect(block);
  }

  public synchronized void copyDone(RDDBlockId block) {
    copies.done(block);
  }

  /**
   * Bytes an insert of a block of {@code rdd} with priority {@code priority} could take without
   * evicting a block ranked at or above it: the on-heap blocks of other RDDs ranked below it.
   */
  public synchronized long roomBelow(double priority, int rdd) {
    long room = 0;
    PriorityIndex.Cursor c = index.walk();
    for (int e = c.next(); e != NONE; e = c.next()) {
      if (!(index.priority(e) < priority)) {
        if (index.indexed()) {
          break;  // the walk is in priority order
        }
        continue;
      }
      MemoryEntry<?> v = table.value(e);
      if (table.meta[e * STRIDE + RDD] != rdd && v != null
          && v.memoryMode() == MemoryMode.ON_HEAP) {
        room += v.size();
      }
    }
    return room;
  }

  /** Priority of a cached block under the table in force (for tests / diagnostics). */
  public synchronized double priority(BlockId id) {
    int e = table.find(id);
    return e == NONE ? Double.NaN : index.priority(e);
  }

  /** Entries of the side state (a bounded-state check): [RDDs in the table or with cached
   * blocks, distinct priorities of cached blocks, planned stages remembered, tasks counted, RDD
   * blocks cached (the rest of size() are Spark's broadcast and other blocks)]. */
  public synchronized int[] stateSizes() {
    int[] s = index.sizes();
    int[] rdds = table.rddCounts(index::listed);
    return new int[] {s[0] + rdds[1], s[1], planned.size(), tasks.size(), rdds[0]};
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
      walks.clearMine();
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

  // ---------------------------------------------------------------- Map methods Spark calls

  // get, put, remove and containsKey run for every block access. Like LinkedHashMap's, they rely
  // on the caller holding this map's monitor, as MemoryStore does for every call (a nested
  // monitor enter would cost a failed CAS each). Every other method takes the monitor itself,
  // so a table change from another thread never interleaves with them.

  @Override
  public MemoryEntry<?> get(Object key) {
    int e = table.find(key);
    if (e == NONE) {
      return null;
    }
    index.touch(e);
    int[] m = table.meta;
    if (m[e * STRIDE + RDD] >= 0 && !walks.markedByMe(e)) {
      TaskCounters c = counters();
      if (c != null) {
        c.read((BlockId) key);
      }
    }
    return table.value(e);
  }

  @Override
  public MemoryEntry<?> put(BlockId key, MemoryEntry<?> value) {
    int e = table.findOrAdd(key);
    MemoryEntry<?> previous = null;
    if (table.added) {
      table.vals[e] = value;
      index.add(e, key);
    } else { // stored again (MemoryStore never does): a use
      previous = table.value(e);
      table.vals[e] = value;
      index.touch(e);
    }
    if (walks.pending > 0) {
      walks.clearMine();
    }
    if (!copies.idle()) {
      copies.stored();
    }
    if (admission.on()) {
      admission.stored();
    }
    TaskCounters c = counters();
    if (c != null) {
      c.stored(key, ValueCount.atStore(key, value, countValues), value);
    }
    return previous;
  }

  @Override
  public MemoryEntry<?> remove(Object key) {
    int e = table.unmap(key);
    if (e == NONE) {
      return null;
    }
    if (walks.pending > 0 && walks.unmark(e)) {
      evictedTotal++;
      if (table.meta[e * STRIDE + RDD] >= 0) {
        TaskCounters c = counters();
        if (c != null) {
          boolean ordered = walks.ordered();
          c.evicted(new TaskCounters.Eviction(table.key(e).name(), ordered ? "priority" : "lru",
              ordered ? index.priority(e) : Double.NaN));
        }
      }
    }
    index.remove(e);
    MemoryEntry<?> v = table.value(e);
    table.release(e);
    return v;
  }

  @Override
  MemoryEntry<?> peek(Object key) {
    int e = table.find(key);
    return e == NONE ? null : table.value(e);
  }

  @Override
  public boolean containsKey(Object key) {
    if (!copies.idle()) {
      copies.checked(key); // MemoryStore's puts begin here
    }
    boolean held = table.find(key) != NONE;
    if (admission.on()) {
      admission.checked(key, held);
    }
    return held;
  }

  @Override
  public synchronized int size() {
    return table.size();
  }

  @Override
  public synchronized boolean isEmpty() {
    return table.size() == 0;
  }

  @Override
  public synchronized void clear() {
    walks.clearAll();
    table.clear();
    index.clearBlocks();
  }

  @Override
  public synchronized boolean containsValue(Object value) {
    for (int e = 0; e < table.top(); e++) {
      if (table.live(e) && java.util.Objects.equals(table.vals[e], value)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public synchronized void forEach(BiConsumer<? super BlockId, ? super MemoryEntry<?>> action) {
    for (int e = 0; e < table.top(); e++) {
      if (table.live(e)) {
        action.accept(table.key(e), table.value(e));
      }
    }
  }

  @Override
  public synchronized void replaceAll(
      BiFunction<? super BlockId, ? super MemoryEntry<?>, ? extends MemoryEntry<?>> f) {
    for (int e = 0; e < table.top(); e++) {
      if (table.live(e)) {
        table.vals[e] = f.apply(table.key(e), table.value(e));
      }
    }
  }

  /** A plain LinkedHashMap with the same entries in eviction order. */
  @Override
  public synchronized Object clone() {
    LinkedHashMap<BlockId, MemoryEntry<?>> copy = new LinkedHashMap<>(32, 0.75f, true);
    PriorityIndex.Cursor c = index.walk();
    for (int e = c.next(); e != NONE; e = c.next()) {
      copy.put(table.key(e), table.value(e));
    }
    return copy;
  }

  private Object writeReplace() {
    return clone(); // serialized as a plain LinkedHashMap
  }

  @Override
  int top() {
    return table.top();
  }

  @Override
  boolean live(int e) {
    return table.live(e);
  }

  @Override
  BlockId keyAt(int e) {
    return table.key(e);
  }

  @Override
  MemoryEntry<?> valueAt(int e) {
    return table.value(e);
  }

  /**
   * The eviction walk's view: Spark's LRU order while no table is in force, else (priority,
   * access order); for a placement copy's put only the blocks ranked below the copy, and with
   * admission for a store only those ranked at or below the stored block. Read-only; records
   * what it yields so the following drop is seen as an eviction.
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
          walks.start(index.indexed());
          RDDBlockId copy = version > 0 ? copies.bounding() : null;
          RDDBlockId stored = version > 0 && admission.on() ? admission.storing() : null;
          return new Walk(index.walk(), copy == null ? Double.POSITIVE_INFINITY
              : index.tablePriority(copy.rddId(), copy.splitIndex()),
              stored == null ? Double.POSITIVE_INFINITY
              : index.tablePriority(stored.rddId(), stored.splitIndex()));
        }
      }
    };
  }

  /** Yields entries ranked below {@code below} and at most {@code atMost}, marking each as
   * walked by this thread (Spark walks under the map's monitor and changes nothing meanwhile). */
  private final class Walk implements Iterator<Map.Entry<BlockId, MemoryEntry<?>>> {
    private final PriorityIndex.Cursor cursor;
    private final double below;
    private final double atMost;
    private int next;

    Walk(PriorityIndex.Cursor cursor, double below, double atMost) {
      this.cursor = cursor;
      this.below = below;
      this.atMost = atMost;
      this.next = advance();
    }

    private int advance() {
      int e = cursor.next();
      if (below != Double.POSITIVE_INFINITY || atMost != Double.POSITIVE_INFINITY) {
        while (e != NONE && !(index.priority(e) < below && index.priority(e) <= atMost)) {
          e = index.indexed() ? NONE : cursor.next(); // indexed: the walk is in priority order
        }
      }
      return e;
    }

    @Override
    public boolean hasNext() {
      return next != NONE;
    }

    @Override
    public Map.Entry<BlockId, MemoryEntry<?>> next() {
      synchronized (PriorityEntries.this) {
        int e = next;
        if (e == NONE) {
          throw new NoSuchElementException();
        }
        next = advance();
        walks.mark(e);
        return new AbstractMap.SimpleImmutableEntry<>(table.key(e), table.value(e));
      }
    }
  }

  /** Copies another map's entries in its iteration (LRU) order; call under its monitor. */
  synchronized void copyFrom(Map<BlockId, MemoryEntry<?>> old) {
    for (Map.Entry<BlockId, MemoryEntry<?>> e : old.entrySet()) {
      put(e.getKey(), e.getValue());
    }
  }
}
