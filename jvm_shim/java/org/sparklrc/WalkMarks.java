package org.sparklrc;

import static org.sparklrc.BlockTable.STRIDE;
import static org.sparklrc.BlockTable.WALKS;

import java.util.ArrayList;
import java.util.HashSet;

/**
 * Which entries each thread's pending eviction walk yielded: Spark walks the map, then gets and
 * removes the blocks it picked, and those calls are an eviction, not a use. An entry's WALKS
 * field counts the threads whose walk yielded it, {@link #pending} their sum, so the per-access
 * paths check one int while no walk is pending. Guarded by the owning map's monitor.
 */
final class WalkMarks {
  private final BlockTable t;
  /** The current thread's marks; a set is in {@link #sets} while it is not empty. */
  private final ThreadLocal<HashSet<Integer>> mine = ThreadLocal.withInitial(HashSet::new);
  private final ArrayList<HashSet<Integer>> sets = new ArrayList<>();
  /** Whether the current thread's walk followed a table (priority order) or Spark's LRU order. */
  private final ThreadLocal<Boolean> ordered = ThreadLocal.withInitial(() -> false);
  /** Sum of the entries' WALKS: 0 = no walk pending. */
  int pending = 0;

  WalkMarks(BlockTable t) {
    this.t = t;
  }

  /** A new walk by the current thread (forgets its previous one). */
  void start(boolean byPriority) {
    if (pending > 0) {
      clearMine();
    }
    ordered.set(byPriority);
  }

  boolean ordered() {
    return ordered.get();
  }

  /** The current thread's walk yielded entry {@code e}. */
  void mark(int e) {
    HashSet<Integer> s = mine.get();
    if (s.add(e)) {
      if (s.size() == 1) {
        sets.add(s);
      }
      t.meta[e * STRIDE + WALKS]++;
      pending++;
    }
  }

  /** Whether the current thread's walk yielded entry {@code e}. */
  boolean markedByMe(int e) {
    return pending > 0 && t.meta[e * STRIDE + WALKS] > 0 && mine.get().contains(e);
  }

  /** Forgets the current thread's walk. */
  void clearMine() {
    HashSet<Integer> s = mine.get();
    if (s.isEmpty()) {
      return;
    }
    for (int e : s) {
      t.meta[e * STRIDE + WALKS]--;
    }
    pending -= s.size();
    s.clear();
    for (int i = sets.size() - 1; i >= 0; i--) {
      if (sets.get(i) == s) {
        sets.remove(i);
      }
    }
  }

  /** Drops a removed entry's marks from every pending walk; whether the current thread's walk
   * had yielded it (then the removal is an eviction). */
  boolean unmark(int e) {
    if (pending == 0 || t.meta[e * STRIDE + WALKS] == 0) {
      return false;
    }
    HashSet<Integer> me = mine.get();
    boolean own = false;
    for (int i = sets.size() - 1; i >= 0; i--) {
      HashSet<Integer> s = sets.get(i);
      if (s.remove(e)) {
        own |= s == me;
        pending--;
        if (s.isEmpty()) {
          sets.remove(i);
        }
      }
    }
    t.meta[e * STRIDE + WALKS] = 0;
    return own;
  }

  /** Every entry is gone. */
  void clearAll() {
    for (HashSet<Integer> s : sets) {
      s.clear();
    }
    sets.clear();
    pending = 0;
  }
}
