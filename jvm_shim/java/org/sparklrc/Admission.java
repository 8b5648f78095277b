package org.sparklrc;

import org.apache.spark.storage.RDDBlockId;

/**
 * Admission ({@code spark.lrc.admit}): a store may evict only blocks ranked at or below the block
 * it stores; short of room it fails, and Spark computes the block without caching it
 * ({@code MEMORY_ONLY}) or writes it to disk. So a block nobody reads again cannot push out one
 * the next stage reads (lrc/evict.py, {@code EvictionIndex(admit=True)}, replays the same rule).
 *
 * <p>Which block a walk is for: every MemoryStore put first asks {@code contains} of a block it
 * does not hold, on the putting thread, then evicts on that thread; the thread's pending block
 * is forgotten at its next put (with nested stores - a miss recomputing through a cached parent -
 * the outer store's later walks go unlimited). Only walks that serve a store are limited:
 * execution memory taking storage back ({@code StorageMemoryPool.freeSpaceToShrinkPool}) must
 * get its room whatever the ranks, and a walk is checked to come from
 * {@code StorageMemoryPool.acquireMemory}. Non-RDD blocks (broadcasts) are never limited.
 */
final class Admission {
  private static final StackWalker STACK = StackWalker.getInstance();
  private final ThreadLocal<RDDBlockId> pending = new ThreadLocal<>();
  private volatile boolean on = false;

  void set(boolean admit) {
    on = admit;
    if (!admit) {
      pending.remove();
    }
  }

  boolean on() {
    return on;
  }

  /** MemoryStore asked for {@code key}: if it is an RDD block not held, a put of it may follow. */
  void checked(Object key, boolean held) {
    if (!held && key instanceof RDDBlockId) {
      pending.set((RDDBlockId) key);
    } else {
      pending.remove();
    }
  }

  /** A block was stored on this thread: its store (or the one that armed) is over. */
  void stored() {
    pending.remove();
  }

  /** The block whose store this thread's eviction walk serves, or null (walk unlimited). */
  RDDBlockId storing() {
    RDDBlockId b = pending.get();
    return b != null && forStore() ? b : null;
  }

  /** Whether the walk being started was asked for by a store (not by execution memory). */
  private static boolean forStore() {
    return STACK.walk(frames -> frames
        .dropWhile(f -> !f.getMethodName().equals("evictBlocksToFreeSpace"))
        .skip(1)
        .findFirst()
        .map(f -> f.getMethodName().equals("acquireMemory")
            && f.getClassName().equals("org.apache.spark.memory.StorageMemoryPool"))
        .orElse(false));
  }
}
