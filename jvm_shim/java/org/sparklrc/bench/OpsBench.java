package org.sparklrc.bench;

import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.memory.MemoryEntry;
import org.sparklrc.PriorityEntries;

/**
 * Cost per call of get, put (a new block) and remove on PriorityEntries, with a table in force
 * and with none, against the {@code LinkedHashMap(32, 0.75f, true)} MemoryStore uses: these run
 * for every block a task reads or writes, so they must cost what Spark's own map costs. Each call
 * is made as MemoryStore makes it, under {@code synchronized (map)}, with a fresh-equal BlockId
 * (Spark builds a new RDDBlockId per read). Batches of BATCH calls on random cached blocks,
 * rotating over the three maps; warm-up batches first; median and p99 of the measured batches'
 * ns per call. Results are consumed (summed into a field that is printed) so the JIT cannot drop
 * the calls.
 */
public final class OpsBench {
  private static final int PARTS = 100;
  private static final int BATCH = 1000;
  private static final int WARMUP = 300;
  private static final int MEASURED = 1500;
  private static final MemoryEntry<?> ENTRY = new EvictionBench.Entry(1 << 20);
  static long sink = 0;

  private interface Op {
    long batch(int round);
  }

  public static void main(int[] sizes) {
    System.out.println("| cached blocks | op | Spark's LinkedHashMap (ns/call, median / p99) "
        + "| PriorityEntries, no table | ratio | PriorityEntries, table in force | ratio |");
    System.out.println("|---|---|---|---|---|---|---|");
    for (int n : sizes) {
      run(n);
    }
    System.out.println("(checksum " + sink + ")");
  }

  private static RDDBlockId[] keys(int n, int rddBase) {
    RDDBlockId[] k = new RDDBlockId[n];
    for (int i = 0; i < n; i++) {
      k[i] = new RDDBlockId(rddBase + i / PARTS, i % PARTS);
    }
    return k;
  }

  private static void fill(Map<BlockId, MemoryEntry<?>> m, int n) {
    for (RDDBlockId k : keys(n, 0)) {
      m.put(k, ENTRY);
    }
  }

  private static void run(int n) {
    LinkedHashMap<BlockId, MemoryEntry<?>> lhm = new LinkedHashMap<>(32, 0.75f, true);
    PriorityEntries plain = new PriorityEntries();
    PriorityEntries ordered = new PriorityEntries();
    fill(lhm, n);
    fill(plain, n);
    fill(ordered, n);
    Random rnd = new Random(42);
    Map<Integer, double[]> table = new HashMap<>();
    for (int r = 0; r < (n + PARTS - 1) / PARTS + BATCH / PARTS + 1; r++) { // + the new blocks'
      double[] a = new double[PARTS];
      for (int p = 0; p < PARTS; p++) {
        a[p] = rnd.nextInt(50);
      }
      table.put(r, a);
      table.put(1_000_000 + r, a);
    }
    ordered.applyTable(1, false, table, java.util.Collections.emptyList());
    RDDBlockId[] lookup = keys(n, 0); // equal to, not the same objects as, the stored keys
    int[][] picks = new int[64][BATCH];
    for (int[] p : picks) {
      for (int i = 0; i < BATCH; i++) {
        p[i] = rnd.nextInt(n);
      }
    }
    RDDBlockId[] fresh = keys(BATCH, 1_000_000);
    String[] names = {"get", "put (new block)", "remove"};
    for (int op = 0; op < 3; op++) {
      Op a = lhmOp(op, lhm, lookup, picks, fresh);
      Op b = peOp(op, plain, lookup, picks, fresh);
      Op c = peOp(op, ordered, lookup, picks, fresh);
      long[][] t = new long[3][MEASURED];
      for (int round = 0; round < WARMUP + MEASURED; round++) {
        long ta = a.batch(round);
        long tb = b.batch(round);
        long tc = c.batch(round);
        if (round >= WARMUP) {
          t[0][round - WARMUP] = ta;
          t[1][round - WARMUP] = tb;
          t[2][round - WARMUP] = tc;
        }
      }
      double[] med = new double[3];
      double[] p99 = new double[3];
      for (int k = 0; k < 3; k++) {
        Arrays.sort(t[k]);
        med[k] = t[k][MEASURED / 2] / (double) BATCH;
        p99[k] = t[k][MEASURED * 99 / 100] / (double) BATCH;
      }
      System.out.printf("| %d | %s | %.1f / %.1f | %.1f / %.1f | %.2f | %.1f / %.1f | %.2f |%n",
          n, names[op], med[0], p99[0], med[1], p99[1], med[1] / med[0], med[2], p99[2],
          med[2] / med[0]);
    }
  }

  // One method per map class, so each call site sees one receiver type (as in MemoryStore).

  private static Op lhmOp(int op, LinkedHashMap<BlockId, MemoryEntry<?>> m, RDDBlockId[] lookup,
      int[][] picks, RDDBlockId[] fresh) {
    switch (op) {
      case 0:
        return round -> {
          int[] p = picks[round & 63];
          long sum = 0;
          long t0 = System.nanoTime();
          for (int i = 0; i < BATCH; i++) {
            MemoryEntry<?> e;
            synchronized (m) {
              e = m.get(lookup[p[i]]);
            }
            sum += e.size();
          }
          long dt = System.nanoTime() - t0;
          sink += sum;
          return dt;
        };
      case 1:
        return round -> {
          long t0 = System.nanoTime();
          for (int i = 0; i < BATCH; i++) {
            synchronized (m) {
              m.put(fresh[i], ENTRY);
            }
          }
          long dt = System.nanoTime() - t0;
          for (int i = 0; i < BATCH; i++) { // untimed: back to n blocks
            synchronized (m) {
              sink += m.remove(fresh[i]).size();
            }
          }
          return dt;
        };
      default:
        return round -> {
          int[] p = picks[round & 63];
          long sum = 0;
          long t0 = System.nanoTime();
          for (int i = 0; i < BATCH; i++) {
            MemoryEntry<?> e;
            synchronized (m) {
              e = m.remove(lookup[p[i]]);
            }
            if (e != null) {
              sum += e.size();
            }
          }
          long dt = System.nanoTime() - t0;
          for (int i = 0; i < BATCH; i++) { // untimed: put them back (as new, most recent)
            synchronized (m) {
              m.put(lookup[p[i]], ENTRY);
            }
          }
          sink += sum;
          return dt;
        };
    }
  }

  private static Op peOp(int op, PriorityEntries m, RDDBlockId[] lookup, int[][] picks,
      RDDBlockId[] fresh) {
    switch (op) {
      case 0:
        return round -> {
          int[] p = picks[round & 63];
          long sum = 0;
          long t0 = System.nanoTime();
          for (int i = 0; i < BATCH; i++) {
            MemoryEntry<?> e;
            synchronized (m) {
              e = m.get(lookup[p[i]]);
            }
            sum += e.size();
          }
          long dt = System.nanoTime() - t0;
          sink += sum;
          return dt;
        };
      case 1:
        return round -> {
          long t0 = System.nanoTime();
          for (int i = 0; i < BATCH; i++) {
            synchronized (m) {
              m.put(fresh[i], ENTRY);
            }
          }
          long dt = System.nanoTime() - t0;
          for (int i = 0; i < BATCH; i++) {
            synchronized (m) {
              sink += m.remove(fresh[i]).size();
            }
          }
          return dt;
        };
      default:
        return round -> {
          int[] p = picks[round & 63];
          long sum = 0;
          long t0 = System.nanoTime();
          for (int i = 0; i < BATCH; i++) {
            MemoryEntry<?> e;
            synchronized (m) {
              e = m.remove(lookup[p[i]]);
            }
            if (e != null) {
              sum += e.size();
            }
          }
          long dt = System.nanoTime() - t0;
          for (int i = 0; i < BATCH; i++) {
            synchronized (m) {
              m.put(lookup[p[i]], ENTRY);
            }
          }
          sink += sum;
          return dt;
        };
    }
  }
}
