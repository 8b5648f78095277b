package org.sparklrc;

import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.function.IntPredicate;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.RDDBlockId;

/**
 * PriorityEntries' storage: block id -> entry number, and each entry's fields in parallel
 * arrays (no object per block, nothing allocated per put). An RDD block is found by its two
 * ints in an open-addressing table (linear probing, Fibonacci hashing of
 * {@code rddId << 32 | splitIndex}, backward-shift deletion, 8 bytes a slot), so a lookup neither
 * hashes nor compares BlockId objects;
 * other blocks (broadcast pieces, ...) go through a HashMap. Entry numbers are reused (a free
 * list). Each entry's int fields sit side by side in {@link #meta} (one cache line): its list
 * links, list, pending walk marks, access sequence and RDD block coordinates. Not thread-safe
 * (guarded by the owning map's monitor).
 */
final class BlockTable {
  static final int NONE = -1;
  // meta[e * STRIDE + field]. The fields start at index 12 (byte 64 after the array header):
  // a large array starts a G1 region, so each entry's 32 bytes then sit in one cache line.
  static final int STRIDE = 8;
  private static final int PAD = 12;
  static final int PREV = PAD;
  static final int NEXT = PAD + 1;
  static final int LIST = PAD + 2;   // the entry's list (PriorityIndex); NONE: a free entry
  static final int WALKS = PAD + 3;  // how many threads' pending eviction walk yielded it
  static final int SEQ_HI = PAD + 4; // access sequence (larger = used more recently), two ints
  static final int SEQ_LO = PAD + 5;
  static final int RDD = PAD + 6;    // NONE for a non-RDD block
  static final int PART = PAD + 7;

  int[] meta = new int[PAD + 16 * STRIDE];
  Object[] vals = new Object[16];
  /** Keys of non-RDD entries (an RDD entry's key is rebuilt from RDD and PART). */
  BlockId[] ids = new BlockId[16];
  private int top = 0;         // entries ever used: 0..top-1
  private int freeHead = NONE; // free entries, linked through NEXT
  private int size = 0;

  /** Slot s: 0 when empty, else the key's hash fingerprint (the high half of its product, from
   * which its home slot follows) << 32 | entry + 1; a fingerprint match is confirmed against the
   * entry's RDD and PART, the cache line a hit reads anyway. */
  private long[] tab = new long[32];
  private int shift = 64 - 5;
  private int rddEntries = 0;
  private final HashMap<BlockId, Integer> others = new HashMap<>();

  static long pack(int rdd, int part) {
    return ((long) rdd << 32) | (part & 0xFFFFFFFFL);
  }

  int size() {
    return size;
  }

  /** Entries ever used (iterate 0..top()-1, skipping those whose LIST is NONE). */
  int top() {
    return top;
  }

  boolean live(int e) {
    return meta[e * STRIDE + LIST] != NONE;
  }

  /** [RDD blocks held, distinct RDDs among them that {@code listed} rejects] (a state check). */
  int[] rddCounts(IntPredicate listed) {
    int blocks = 0;
    HashSet<Integer> unlisted = new HashSet<>();
    for (int e = 0; e < top; e++) {
      int rdd = meta[e * STRIDE + RDD];
      if (live(e) && rdd >= 0) {
        blocks++;
        if (!listed.test(rdd)) {
          unlisted.add(rdd);
        }
      }
    }
    return new int[] {blocks, unlisted.size()};
  }

  long seq(int e) {
    int b = e * STRIDE;
    return ((long) meta[b + SEQ_HI] << 32) | (meta[b + SEQ_LO] & 0xFFFFFFFFL);
  }

  void setSeq(int e, long s) {
    int b = e * STRIDE;
    meta[b + SEQ_HI] = (int) (s >>> 32);
    meta[b + SEQ_LO] = (int) s;
  }

  /** The key of a live entry (a fresh, equal RDDBlockId for an RDD block). */
  BlockId key(int e) {
    int rdd = meta[e * STRIDE + RDD];
    return rdd < 0 ? ids[e] : new RDDBlockId(rdd, meta[e * STRIDE + PART]);
  }

  @SuppressWarnings("unchecked")
  <V> V value(int e) {
    return (V) vals[e];
  }

  private static long hash(int rdd, int part) {
    return pack(rdd, part) * 0x9E3779B97F4A7C15L;
  }

  /** The home slot of a slot value (or of a hash: its high half is the fingerprint). */
  private int home(long v) {
    return (int) ((v >>> 32) >>> (shift - 32));
  }

  private boolean holds(long v, int fp, int rdd, int part) {
    if ((int) (v >>> 32) != fp) {
      return false;
    }
    int b = ((int) v - 1) * STRIDE;
    return meta[b + RDD] == rdd && meta[b + PART] == part;
  }

  /** The slot of an RDD block, or ~(the empty slot where it would go). */
  private int slot(int rdd, int part) {
    long h = hash(rdd, part);
    int fp = (int) (h >>> 32);
    long[] t = tab;
    int m = t.length - 1;
    for (int s = home(h); ; s = (s + 1) & m) {
      long v = t[s];
      if (v == 0) {
        return ~s;
      }
      if (holds(v, fp, rdd, part)) {
        return s;
      }
    }
  }

  /** The entry of {@code key}, or NONE. */
  int find(Object key) {
    if (key instanceof RDDBlockId) {
      RDDBlockId r = (RDDBlockId) key;
      int s = slot(r.rddId(), r.splitIndex());
      return s < 0 ? NONE : (int) tab[s] - 1;
    }
    if (key == null || others.isEmpty()) {
      return NONE;
    }
    Integer e = others.get(key);
    return e == null ? NONE : e;
  }

  /** The entry of {@code key}; a new entry (its LIST and SEQ for the caller to set) when there
   * was none, reported by {@link #added}. */
  int findOrAdd(BlockId key) {
    added = false;
    if (key instanceof RDDBlockId) {
      RDDBlockId r = (RDDBlockId) key;
      int rdd = r.rddId();
      int part = r.splitIndex();
      if ((rddEntries + 1) * 2 > tab.length) {
        growTab();
      }
      int s = slot(rdd, part);
      if (s >= 0) {
        return (int) tab[s] - 1;
      }
      int e = alloc(rdd, part);
      tab[~s] = (hash(rdd, part) & 0xFFFFFFFF00000000L) | (e + 1);
      rddEntries++;
      return e;
    }
    Integer old = others.get(key);
    if (old != null) {
      return old;
    }
    int e = alloc(NONE, NONE);
    ids[e] = key;
    others.put(key, e);
    return e;
  }

  /** Set by findOrAdd: whether it added an entry. */
  boolean added;

  /** Removes {@code key}'s entry from the lookup and returns it (still holding its fields until
   * {@link #release}), or NONE. */
  int unmap(Object key) {
    if (key instanceof RDDBlockId) {
      RDDBlockId r = (RDDBlockId) key;
      int i = slot(r.rddId(), r.splitIndex());
      if (i < 0) {
        return NONE;
      }
      long[] t = tab;
      int m = t.length - 1;
      int e = (int) t[i] - 1;
      t[i] = 0;
      rddEntries--;
      // Backward shift: move later entries of the probe run into the hole when their home slot
      // does not lie cyclically in (hole, their slot].
      for (int j = (i + 1) & m; t[j] != 0; j = (j + 1) & m) {
        int h = home(t[j]);
        boolean stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (!stays) {
          t[i] = t[j];
          t[j] = 0;
          i = j;
        }
      }
      return e;
    }
    if (key == null || others.isEmpty()) {
      return NONE;
    }
    Integer e = others.remove(key);
    return e == null ? NONE : e;
  }

  /** Frees an unmapped entry for reuse. */
  void release(int e) {
    int b = e * STRIDE;
    vals[e] = null;
    if (meta[b + RDD] < 0) {
      ids[e] = null;
    }
    meta[b + LIST] = NONE;
    meta[b + NEXT] = freeHead;
    freeHead = e;
    size--;
  }

  /** Forgets every entry. */
  void clear() {
    Arrays.fill(tab, 0);
    Arrays.fill(vals, null);
    Arrays.fill(ids, null);
    others.clear();
    top = 0;
    freeHead = NONE;
    size = 0;
    rddEntries = 0;
  }

  private int alloc(int rdd, int part) {
    int e = freeHead;
    if (e != NONE) {
      freeHead = meta[e * STRIDE + NEXT];
    } else {
      if (top == vals.length) {
        growSlab();
      }
      e = top++;
    }
    int b = e * STRIDE;
    meta[b + WALKS] = 0;
    meta[b + RDD] = rdd;
    meta[b + PART] = part;
    size++;
    added = true;
    return e;
  }

  private void growSlab() { // out of alloc's line, which the JIT then inlines
    int cap = top * 2;
    meta = Arrays.copyOf(meta, PAD + cap * STRIDE);
    vals = Arrays.copyOf(vals, cap);
    ids = Arrays.copyOf(ids, cap);
  }

  private void growTab() {
    long[] old = tab;
    tab = new long[old.length * 2];
    shift--;
    int m = tab.length - 1;
    for (long v : old) {
      if (v != 0) {
        int i = home(v);
        while (tab[i] != 0) {
          i = (i + 1) & m;
        }
        tab[i] = v;
      }
    }
  }
}
