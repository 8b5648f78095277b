package org.sparklrc.bench;

import java.util.*;
import org.apache.spark.storage.*;
import org.apache.spark.storage.memory.MemoryEntry;
import org.sparklrc.PriorityEntries;

/**
 * Randomized check of PriorityEntries against a reference model (a LinkedHashMap in access
 * order, the table and the demoted blocks, sorted afresh): random puts, gets, removes, table
 * deltas and resets, demotions, clears and eviction walks, comparing every return value, the
 * size, the walk order, the key set, the values and each block's priority. Run by
 * tests/spark/test_shim_local.py through py4j; {@link #run} throws AssertionError on a mismatch.
 */
public final class MapModelCheck {
  static final class E implements MemoryEntry<Object> {
    final long s; E(long s){this.s=s;}
    public long size(){return s;}
    public org.apache.spark.memory.MemoryMode memoryMode(){return org.apache.spark.memory.MemoryMode.ON_HEAP;}
    public scala.reflect.ClassTag<Object> classTag(){return scala.reflect.ClassTag$.MODULE$.Any();}
  }
  /** Runs seeds 0..seeds-1 (3,000 random operations each); returns "ok". */
  public static String run(int seeds) {
    for (int seed = 0; seed < seeds; seed++) {
      runSeed(seed);
    }
    return "ok";
  }

  private static void runSeed(int seed) {
    Random r = new Random(seed);
    PriorityEntries m = new PriorityEntries();
    LinkedHashMap<String, BlockId> ref = new LinkedHashMap<>(16, 0.75f, true); // name -> id, access order
    Map<String, MemoryEntry<?>> vals = new HashMap<>();
    Map<Integer, double[]> table = new HashMap<>();
    Set<BlockId> demoted = new HashSet<>();
    boolean indexed = false; long version = 0;
    int rdds = 1 + r.nextInt(6), parts = 1 + r.nextInt(40);
    for (int step = 0; step < 3000; step++) {
      int op = r.nextInt(100);
      BlockId id = r.nextInt(10) == 0 ? new BroadcastBlockId(r.nextInt(5), "piece" + r.nextInt(3))
          : new RDDBlockId(r.nextInt(rdds), r.nextInt(parts));
      String k = id.name();
      if (op < 30) {
        MemoryEntry<?> v = new E(r.nextInt(100));
        MemoryEntry<?> prev = m.put(id, v);
        check(prev == vals.get(k), "put prev");
        ref.put(k, id); vals.put(k, v);
      } else if (op < 55) {
        MemoryEntry<?> v = m.get(id);
        check(v == vals.get(k), "get");
        ref.get(k);
      } else if (op < 70) {
        MemoryEntry<?> v = m.remove(id);
        check(v == vals.get(k), "remove");
        ref.remove(k); vals.remove(k);
      } else if (op < 72) {
        Map<Integer, double[]> d = new HashMap<>();
        boolean reset = r.nextInt(5) == 0;
        if (reset) table.clear();
        int nch = 1 + r.nextInt(rdds);
        for (int i = 0; i < nch; i++) {
          int rdd = r.nextInt(rdds + 1);
          double[] arr = r.nextInt(4) == 0 ? new double[0] : new double[r.nextInt(parts + 3)];
          for (int j = 0; j < arr.length; j++) arr[j] = r.nextInt(6) - 2 + (r.nextInt(3)==0 ? 0.5 : 0);
          d.put(rdd, arr);
          if (arr.length == 0) table.remove(rdd); else table.put(rdd, arr);
        }
        long nv = r.nextInt(8) == 0 ? 0 : version + 1;
        m.applyTable(nv, reset, d, Collections.emptyList());
        version = Math.max(version, nv);
        if (version > 0) indexed = true;
      } else if (op < 73) {
        demoted.clear();
        for (int i = 0; i < r.nextInt(5); i++) demoted.add(new RDDBlockId(r.nextInt(rdds), r.nextInt(parts)));
        m.setDemoted(new HashSet<>(demoted));
      } else if (op < 74) {
        m.clear(); ref.clear(); vals.clear();
      } else if (op < 80) {
        check(m.containsKey(id) == vals.containsKey(k), "containsKey");
      } else if (op < 83) {
        // eviction-like walk: take first few, then get + remove them
        List<BlockId> sel = new ArrayList<>();
        synchronized (m) {
          Iterator<Map.Entry<BlockId, MemoryEntry<?>>> it = m.entrySet().iterator();
          for (int i = 0; i < 3 && it.hasNext(); i++) sel.add(it.next().getKey());
        }
        long before = m.evictedTotal();
        for (BlockId b : sel) { m.get(b); m.remove(b); ref.remove(b.name()); vals.remove(b.name()); }
        check(m.evictedTotal() - before == sel.size(), "evicted count");
      }
      check(m.size() == vals.size(), "size " + m.size() + " " + vals.size());
      if (step % 50 == 0 || op >= 70) {
        // expected order
        List<String> names = new ArrayList<>(ref.keySet()); // LRU order
        final boolean ix = indexed;
        List<String> exp = new ArrayList<>(names);
        if (ix) {
          Map<String, Integer> pos = new HashMap<>();
          for (int i = 0; i < names.size(); i++) pos.put(names.get(i), i);
          exp.sort((x, y) -> {
            int c = Double.compare(prio(ref.get(x), table, demoted), prio(ref.get(y), table, demoted));
            return c != 0 ? c : Integer.compare(pos.get(x), pos.get(y));
          });
        }
        List<String> act = new ArrayList<>();
        Iterator<Map.Entry<BlockId, MemoryEntry<?>>> it = m.entrySet().iterator();
        while (it.hasNext()) { Map.Entry<BlockId, MemoryEntry<?>> e = it.next(); act.add(e.getKey().name()); check(e.getValue() == vals.get(e.getKey().name()), "walk value"); }
        m.put(new RDDBlockId(999, 0), new E(1)); m.remove(new RDDBlockId(999, 0)); // ends the walk
        check(act.equals(exp), "order seed " + seed + " step " + step + "\n" + act + "\n" + exp);
        Set<String> ks = new HashSet<>(); for (BlockId b : m.keySet()) ks.add(b.name());
        check(ks.equals(vals.keySet()), "keySet");
        int nv = 0; for (MemoryEntry<?> v : m.values()) nv++;
        check(nv == vals.size(), "values");
        for (String n : names) check(m.priority(ref.get(n)) == (ix ? prio(ref.get(n), table, demoted) : 0.0), "priority");
      }
    }
  }
  static double prio(BlockId b, Map<Integer, double[]> t, Set<BlockId> dem) {
    if (!(b instanceof RDDBlockId)) return 0.0; // unranked, like an unlisted RDD
    if (dem.contains(b)) return Double.NEGATIVE_INFINITY;
    RDDBlockId r = (RDDBlockId) b; double[] a = t.get(r.rddId());
    return a == null || r.splitIndex() >= a.length ? 0.0 : a[r.splitIndex()];
  }
  private static void check(boolean c, String msg) { if (!c) throw new AssertionError(msg); }
}
