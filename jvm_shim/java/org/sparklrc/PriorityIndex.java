package org.sparklrc;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.TreeMap;
import org.apache.spark.memory.MemoryMode;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.memory.MemoryEntry;
import scala.reflect.ClassTag;

/**
 * The eviction order of PriorityEntries under a table: cached blocks by (priority ascending,
 * least recently used first), kept in O(1) per block access. One list per distinct priority,
 * least recently used first (an access moves the block to its list's tail); the lists in a
 * TreeMap by priority, found by a primitive hash table on the per-block paths. Each RDD's cached
 * blocks are linked too, so a table change re-keys only the changed RDDs' blocks, merged into
 * their new lists by access sequence. Guarded by the owning map's monitor.
 */
final class PriorityIndex {
  /** One cached block: the value PriorityEntries' LinkedHashMap holds (unwrapped before Spark
   * sees it), a member of its priority list and of its RDD's list, and the Map.Entry the
   * eviction walk yields. A MemoryEntry itself (delegating), so a value that leaked out still
   * answers its size. */
  static final class Node implements Map.Entry<BlockId, MemoryEntry<?>>, MemoryEntry<Object> {
    final BlockId key;
    final int rdd;   // -1 for non-RDD blocks
    final int part;
    MemoryEntry<?> value;
    double priority;
    long seq;        // access sequence: larger = used more recently
    Bucket bucket;   // null while not indexed
    Node prev;
    Node next;
    Node rddPrev;
    Node rddNext;
    int walks;       // how many threads' pending eviction walk yielded this node

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

    @Override
    public long size() {
      return value.size();
    }

    @Override
    public MemoryMode memoryMode() {
      return value.memoryMode();
    }

    @Override
    @SuppressWarnings("unchecked")
    public ClassTag<Object> classTag() {
      return (ClassTag<Object>) value.classTag();
    }
  }

  /** The cached blocks of one priority, least recently used first. */
  static final class Bucket {
    final double priority;
    Node head;
    Node tail;
    int size;

    Bucket(double priority) {
      this.priority = priority;
    }

    /** Links {@code n} after {@code at} (at the head when {@code at} is null). */
    void insertAfter(Node at, Node n) {
      n.bucket = this;
      n.prev = at;
      n.next = at == null ? head : at.next;
      if (n.next == null) {
        tail = n;
      } else {
        n.next.prev = n;
      }
      if (at == null) {
        head = n;
      } else {
        at.next = n;
      }
      size++;
    }

    void unlink(Node n) {
      if (n.prev == null) {
        head = n.next;
      } else {
        n.prev.next = n.next;
      }
      if (n.next == null) {
        tail = n.prev;
      } else {
        n.next.prev = n.prev;
      }
      n.prev = n.next = null;
      n.bucket = null;
      size--;
    }
  }

  /** One RDD: its priorities in the table (null: not listed) and its indexed cached blocks. */
  static final class RddState {
    final int id;
    double[] prio;
    Node head;
    int blocks;

    RddState(int id) {
      this.id = id;
    }

    double priority(int part) {
      double[] a = prio;
      return a == null || part < 0 || part >= a.length ? 0.0 : a[part];
    }
  }

  /** Re-keyed blocks: by new priority, then most recently used first (the merge's order). */
  private static final Comparator<Node> MERGE = (a, b) -> {
    int c = Double.compare(a.priority, b.priority);
    return c != 0 ? c : Long.compare(b.seq, a.seq);
  };

  private final TreeMap<Double, Bucket> order = new TreeMap<>();
  private final LongTable<Bucket> byPriority = new LongTable<>(); // keyed by doubleToLongBits
  private final LongTable<RddState> rdds = new LongTable<>();
  /** This executor's copies of blocks the brain moved to a GPU executor: first to evict here. */
  private final HashSet<BlockId> demoted = new HashSet<>();

  /** A block's priority: -infinity for a demoted copy, else its RDD's table entry. */
  private double priorityOf(RddState st, Node n) {
    return !demoted.isEmpty() && demoted.contains(n.key) ? Double.NEGATIVE_INFINITY
        : st.priority(n.part);
  }

  /** The table's priority of an RDD block (0 when the table does not list it). */
  double tablePriority(int rdd, int part) {
    RddState st = rdds.get(rdd);
    return st == null ? 0.0 : st.priority(part);
  }

  /** Replaces the demoted copies; returns the RDDs whose blocks must be re-keyed. */
  Set<Integer> setDemoted(Set<BlockId> blocks) {
    HashSet<Integer> changed = new HashSet<>();
    for (BlockId b : demoted) {
      if (!blocks.contains(b)) {
        changed.add(((RDDBlockId) b).rddId());
      }
    }
    for (BlockId b : blocks) {
      if (b instanceof RDDBlockId && !demoted.contains(b)) {
        changed.add(((RDDBlockId) b).rddId());
      }
    }
    demoted.clear();
    for (BlockId b : blocks) {
      if (b instanceof RDDBlockId) {
        demoted.add(b);
      }
    }
    return changed;
  }

  /** Sets the table's arrays for the given RDDs (null or empty: not listed); {@code reset}
   * first unlists every RDD. Returns how many indexed blocks those RDDs have. */
  int setPriorities(Map<Integer, double[]> arrays, boolean reset) {
    if (reset) {
      for (RddState st : rdds.values()) {
        st.prio = null;
        dropIfUnused(st);
      }
    }
    int affected = 0;
    for (Map.Entry<Integer, double[]> e : arrays.entrySet()) {
      double[] a = e.getValue() == null || e.getValue().length == 0 ? null : e.getValue();
      RddState st = rdds.get(e.getKey());
      if (st == null && a != null) {
        st = new RddState(e.getKey());
        rdds.put(st.id, st);
      }
      if (st != null) {
        st.prio = a;
        affected += st.blocks;
        dropIfUnused(st);
      }
    }
    return affected;
  }

  private void dropIfUnused(RddState st) {
    if (st.prio == null && st.blocks == 0) {
      rdds.remove(st.id);
    }
  }

  /** Rebuilds every list from nodes in access-sequence order (Spark's LRU order): O(n). */
  void rebuild(Iterable<MemoryEntry<?>> lruOrder) {
    order.clear();
    byPriority.clear();
    for (RddState st : rdds.values()) {
      st.head = null;
      st.blocks = 0;
    }
    for (MemoryEntry<?> v : lruOrder) {
      Node n = (Node) v;
      n.bucket = null;
      add(n);
    }
    for (RddState st : rdds.values()) {
      dropIfUnused(st);
    }
  }

  /** Adds a node (in no list) to its RDD's list and at the tail of its priority's list. */
  void add(Node n) {
    if (n.rdd >= 0) {
      RddState st = rdds.get(n.rdd);
      if (st == null) {
        st = new RddState(n.rdd);
        rdds.put(n.rdd, st);
      }
      n.rddPrev = null;
      n.rddNext = st.head;
      if (st.head != null) {
        st.head.rddPrev = n;
      }
      st.head = n;
      st.blocks++;
      n.priority = priorityOf(st, n);
    } else {
      n.priority = Double.POSITIVE_INFINITY;
    }
    Bucket b = bucketFor(n.priority);
    b.insertAfter(b.tail, n);
  }

  /** Removes an indexed node from both its lists. */
  void remove(Node n) {
    leaveBucket(n);
    if (n.rdd >= 0) {
      RddState st = rdds.get(n.rdd);
      if (n.rddPrev == null) {
        st.head = n.rddNext;
      } else {
        n.rddPrev.rddNext = n.rddNext;
      }
      if (n.rddNext != null) {
        n.rddNext.rddPrev = n.rddPrev;
      }
      n.rddPrev = n.rddNext = null;
      st.blocks--;
      dropIfUnused(st);
    }
  }

  /** A use of an indexed node: it becomes the most recently used of its list. */
  static void touched(Node n) {
    Bucket b = n.bucket;
    if (b.tail != n) {
      b.unlink(n);
      b.insertAfter(b.tail, n);
    }
  }

  /** Forgets every block (the table's arrays stay). */
  void clearBlocks() {
    rebuild(java.util.Collections.emptyList());
  }

  private Bucket bucketFor(double p) {
    long bits = Double.doubleToLongBits(p);
    Bucket b = byPriority.get(bits);
    if (b == null) {
      b = new Bucket(p);
      byPriority.put(bits, b);
      order.put(p, b);
    }
    return b;
  }

  /** Unlinks a node from its list; an emptied list goes (walks never visit empty lists). */
  private void leaveBucket(Node n) {
    Bucket b = n.bucket;
    b.unlink(n);
    if (b.size == 0) {
      order.remove(b.priority);
      byPriority.remove(Double.doubleToLongBits(b.priority));
    }
  }

  /** Moves the changed RDDs' blocks whose priority changed into their new lists, each at its
   * access-sequence position, merged from the list's tail (recently used blocks move least). */
  void rekey(Collection<Integer> changed) {
    ArrayList<Node> moved = new ArrayList<>();
    for (Integer rdd : changed) {
      RddState st = rdds.get(rdd);
      for (Node n = st == null ? null : st.head; n != null; n = n.rddNext) {
        double p = priorityOf(st, n);
        if (Double.compare(p, n.priority) != 0) {
          leaveBucket(n);
          n.priority = p;
          moved.add(n);
        }
      }
    }
    moved.sort(MERGE);
    Bucket b = null;
    Node at = null;
    for (Node n : moved) {
      if (b == null || Double.compare(b.priority, n.priority) != 0) {
        b = bucketFor(n.priority);
        at = b.tail;
      }
      while (at != null && at.seq > n.seq) {
        at = at.prev;
      }
      b.insertAfter(at, n);
    }
  }

  /** Indexed nodes in eviction order: list by list from the lowest priority. */
  Iterator<Node> walk() {
    final Iterator<Bucket> lists = order.values().iterator();
    return new Iterator<Node>() {
      private Node next = lists.hasNext() ? lists.next().head : null;

      @Override
      public boolean hasNext() {
        return next != null;
      }

      @Override
      public Node next() {
        Node n = next;
        if (n == null) {
          throw new NoSuchElementException();
        }
        next = n.next;
        while (next == null && lists.hasNext()) {
          next = lists.next().head;
        }
        return n;
      }
    };
  }

  /** [RDDs listed in the table or with cached blocks, distinct priorities of cached blocks]. */
  int[] sizes() {
    return new int[] {rdds.size(), order.size()};
  }
}
