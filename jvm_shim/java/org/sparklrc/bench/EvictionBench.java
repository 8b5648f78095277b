package org.sparklrc.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.spark.memory.MemoryMode;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.memory.MemoryEntry;
import org.sparklrc.PriorityEntries;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Cost of one eviction decision on PriorityEntries as MemoryStore.evictBlocksToFreeSpace makes it
 * (under the map's monitor: walk entrySet() from the front, skip blocks of the RDD being inserted,
 * select until enough bytes), then the drop (remove) and the new block's put; plus the cost of
 * applying table deltas; then the cost of get, put (a new block) and remove against the
 * {@code LinkedHashMap(32, 0.75f, true)} MemoryStore uses ({@link OpsBench}). Usage:
 * java -cp shim.jar:pyspark/jars/* org.sparklrc.bench.EvictionBench [sizes...]
 */
public final class EvictionBench {
  static final class Entry implements MemoryEntry<Object> {
    private final long size;

    Entry(long size) {
      this.size = size;
    }

    @Override
    public long size() {
      return size;
    }

    @Override
    public MemoryMode memoryMode() {
      return MemoryMode.ON_HEAP;
    }

    @Override
    public ClassTag<Object> classTag() {
      return ClassTag$.MODULE$.Any();
    }
  }

  private static final long BLOCK = 1 << 20;
  private static final int PARTS = 100; // partitions per RDD

  public static void main(String[] args) {
    int[] sizes = args.length == 0 ? new int[] {1000, 10000, 100000} : new int[args.length];
    for (int i = 0; i < args.length; i++) {
      sizes[i] = Integer.parseInt(args[i]);
    }
    System.out.println("| cached blocks | eviction decision, ordered (ms, median / p99) "
        + "| same, no table (Spark LRU order) | full sort baseline (ms) "
        + "| delta: 1 RDD of 100 blocks (ms) | full table, all RDDs (ms) |");
    System.out.println("|---|---|---|---|---|---|");
    run(1000, false); // JIT warm-up
    run(10000, false);
    for (int n : sizes) {
      run(n, true);
    }
    System.out.println();
    OpsBench.main(sizes);
  }

  private static Map<Integer, double[]> randomTable(Random rnd, int rdds) {
    Map<Integer, double[]> t = new HashMap<>();
    for (int r = 0; r < rdds; r++) {
      double[] a = new double[PARTS];
      for (int p = 0; p < PARTS; p++) {
        a[p] = rnd.nextInt(50);
      }
      t.put(r, a);
    }
    return t;
  }

  private static PriorityEntries fill(int n) {
    PriorityEntries m = new PriorityEntries();
    for (int i = 0; i < n; i++) {
      m.put(new RDDBlockId(i / PARTS, i % PARTS), new Entry(BLOCK));
    }
    return m;
  }

  /** One decision + drop + insert, as evictBlocksToFreeSpace does; returns ns of the decision. */
  private static long evictOnce(Map<BlockId, MemoryEntry<?>> m, int newRdd, int[] nextPart,
      long space) {
    long t0 = System.nanoTime();
    List<BlockId> selected = new ArrayList<>();
    synchronized (m) {
      long freed = 0;
      Iterator<Map.Entry<BlockId, MemoryEntry<?>>> it = m.entrySet().iterator();
      while (freed < space && it.hasNext()) {
        Map.Entry<BlockId, MemoryEntry<?>> e = it.next();
        BlockId id = e.getKey();
        if (!(id instanceof RDDBlockId) || ((RDDBlockId) id).rddId() != newRdd) {
          selected.add(id);
          freed += e.getValue().size();
        }
      }
    }
    long dt = System.nanoTime() - t0;
    synchronized (m) {
      for (BlockId id : selected) {
        m.get(id);
        m.remove(id);
      }
      for (long freed = 0; freed < space; freed += BLOCK) { // keep the cache size constant
        m.put(new RDDBlockId(newRdd, nextPart[0]++), new Entry(BLOCK));
      }
    }
    return dt;
  }

  private static double ms(long ns) {
    return ns / 1e6;
  }

  private static long[] timeEvictions(Map<BlockId, MemoryEntry<?>> m, int rounds, int newRdd) {
    int[] next = {0};
    long[] t = new long[rounds];
    for (int i = 0; i < rounds; i++) {
      t[i] = evictOnce(m, newRdd, next, 2 * BLOCK);
    }
    java.util.Arrays.sort(t);
    return t;
  }

  private static void run(int n, boolean print) {
    Random rnd = new Random(42);
    int rdds = (n + PARTS - 1) / PARTS;
    int rounds = Math.min(2000, n / 8); // never runs out of evictable (older) blocks
    // Ordered: a table over every RDD.
    PriorityEntries m = fill(n);
    Map<Integer, double[]> first = randomTable(rnd, rdds);
    double[] hot = new double[2 * rounds + 2];
    java.util.Arrays.fill(hot, 100.0); // blocks being inserted: still referenced
    first.put(100000, hot);
    first.put(100001, hot);
    m.applyTable(1, false, first, Collections.emptyList());
    timeEvictions(m, rounds, 100000); // warm-up
    long[] ord = timeEvictions(m, rounds, 100001);
    // No table: Spark's order.
    PriorityEntries lru = fill(n);
    timeEvictions(lru, rounds, 100000);
    long[] plain = timeEvictions(lru, rounds, 100001);
    // Baseline: full sort of all blocks by priority per decision (the prototype's approach).
    long[] sort = new long[50];
    Map<Integer, double[]> tbl = randomTable(rnd, rdds);
    List<BlockId> keys = new ArrayList<>(fill(n).keySet());
    for (int i = 0; i < sort.length; i++) {
      long t0 = System.nanoTime();
      List<BlockId> copy = new ArrayList<>(keys);
      copy.sort((a, b) -> Double.compare(
          tbl.get(((RDDBlockId) a).rddId())[((RDDBlockId) a).splitIndex()],
          tbl.get(((RDDBlockId) b).rddId())[((RDDBlockId) b).splitIndex()]));
      sort[i] = System.nanoTime() - t0;
    }
    java.util.Arrays.sort(sort);
    // Table deltas.
    long[] one = new long[200];
    for (int i = 0; i < one.length; i++) {
      Map<Integer, double[]> d = new HashMap<>();
      double[] a = new double[PARTS];
      for (int p = 0; p < PARTS; p++) {
        a[p] = rnd.nextInt(50);
      }
      d.put(rnd.nextInt(rdds), a);
      long t0 = System.nanoTime();
      m.applyTable(m.version() + 1, false, d, Collections.emptyList());
      one[i] = System.nanoTime() - t0;
    }
    java.util.Arrays.sort(one);
    long[] full = new long[20];
    for (int i = 0; i < full.length; i++) {
      Map<Integer, double[]> d = randomTable(rnd, rdds + 20);
      long t0 = System.nanoTime();
      m.applyTable(m.version() + 1, false, d, Collections.emptyList());
      full[i] = System.nanoTime() - t0;
    }
    java.util.Arrays.sort(full);
    if (!print) {
      return;
    }
    System.out.printf("| %d | %.4f / %.4f | %.4f / %.4f | %.3f | %.4f | %.3f |%n", n,
        ms(ord[rounds / 2]), ms(ord[rounds * 99 / 100]), ms(plain[rounds / 2]),
        ms(plain[rounds * 99 / 100]), ms(sort[sort.length / 2]), ms(one[one.length / 2]),
        ms(full[full.length / 2]));
  }
}
