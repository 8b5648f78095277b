package org.sparklrc;

import java.util.HashSet;
import org.apache.spark.TaskContext;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.RDDBlockId;

/**
 * The GPU placement copies on their way to this executor, and the rank up to which their puts
 * may evict. Placement checks for room before it asks for a copy, but a task's insert can land
 * between that check and the copy's put; so the put itself is bounded. Every MemoryStore put
 * ({@code putBytes}, {@code putIteratorAsValues}, {@code putIteratorAsBytes}) first asks
 * {@code contains(block)} on the putting thread, then runs its evictions on that thread: an
 * expected copy's {@code contains} arms the thread (not a task's: a task that computes the block
 * itself stores it as Spark would), and its eviction walks then yield only blocks ranked below
 * the copy under the table in force. Without that room the put fails and nothing is evicted;
 * the block stays where it is and Spark reads it remotely.
 *
 * <p>Guarded by the PriorityEntries monitor (MemoryStore calls the map under it).
 */
final class CopyGuard {
  private final HashSet<BlockId> expected = new HashSet<>();
  private Thread armed;
  private RDDBlockId armedBlock;

  /** Nothing expected, nothing armed: the per-access methods skip the guard. */
  boolean idle() {
    return armed == null && expected.isEmpty();
  }

  void expect(RDDBlockId block) {
    expected.add(block);
  }

  void done(RDDBlockId block) {
    expected.remove(block);
    if (block.equals(armedBlock)) {
      disarm();
    }
  }

  /** MemoryStore asked whether it holds {@code key}: a put of it may follow on this thread. */
  void checked(Object key) {
    Thread t = Thread.currentThread();
    if (expected.contains(key) && TaskContext.get() == null) {
      armed = t;
      armedBlock = (RDDBlockId) key;
    } else if (armed == t) {
      disarm(); // another block's put (or lookup) on the armed thread
    }
  }

  /** A block was stored: the armed put, if it ran on this thread, is over. */
  void stored() {
    if (armed == Thread.currentThread()) {
      disarm();
    }
  }

  /** The copy whose put this thread's eviction walk serves, or null when the walk is unbounded. */
  RDDBlockId bounding() {
    return armed == Thread.currentThread() ? armedBlock : null;
  }

  private void disarm() {
    armed = null;
    armedBlock = null;
  }
}
