package org.sparklrc;

import org.apache.spark.SparkEnv;
import org.apache.spark.memory.MemoryMode;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.memory.DeserializedMemoryEntry;
import org.apache.spark.storage.memory.MemoryEntry;
import org.apache.spark.storage.memory.SerializedMemoryEntry;

/**
 * The values a stored block holds, reported with the task so that a recorded trace's replay
 * reserves unroll memory as Spark did (lrc/unroll.py: Spark grows a store's reservation to 1.5x
 * what it has unrolled at values 1, 17, 33, ...; a block's count decides how far past its size
 * the last step goes). A deserialized block's count is its array's length, free at the store. A
 * serialized block's values are bytes: with {@code spark.lrc.countValues} on, the task reads the
 * block back after it ends, the way BlockManager reads one (outside the map's monitor, one value
 * at a time: what the block's next hit costs), and reports the count.
 */
final class ValueCount {
  static final long UNKNOWN = -1;
  /** A serialized block to read after the task ({@link #read}). */
  static final long LATER = -2;
  // What counting cost this JVM: blocks read, their bytes, the time (logged at shutdown)
  private static final java.util.concurrent.atomic.AtomicLongArray COST =
      new java.util.concurrent.atomic.AtomicLongArray(3);

  private ValueCount() {}

  /** "N serialized blocks (B bytes) counted in T ms", or null if none was. */
  static String cost() {
    long n = COST.get(0);
    return n == 0 ? null : n + " serialized blocks (" + COST.get(1) + " bytes) counted in "
        + String.format(java.util.Locale.ROOT, "%.1f", COST.get(2) / 1e6) + " ms";
  }

  /** At the store, under the map's monitor (O(1)). */
  static long atStore(BlockId id, MemoryEntry<?> value, boolean countSerialized) {
    if (value instanceof DeserializedMemoryEntry) {
      Object values = ((DeserializedMemoryEntry<?>) value).value();
      return values == null ? UNKNOWN : java.lang.reflect.Array.getLength(values);
    }
    if (countSerialized && id instanceof RDDBlockId && value instanceof SerializedMemoryEntry
        && ((SerializedMemoryEntry<?>) value).memoryMode() == MemoryMode.ON_HEAP) {
      return LATER; // on-heap bytes stay readable even if the block is dropped meanwhile
    }
    return UNKNOWN;
  }

  /** Counts a serialized block's values by deserializing them; UNKNOWN if that fails. */
  @SuppressWarnings("unchecked")
  static long read(BlockId id, Object value) {
    long t0 = System.nanoTime();
    try {
      SerializedMemoryEntry<Object> e = (SerializedMemoryEntry<Object>) value;
      scala.collection.Iterator<Object> it = SparkEnv.get().serializerManager()
          .dataDeserializeStream(id, e.buffer().toInputStream(false), e.classTag());
      long n = 0;
      while (it.hasNext()) {
        it.next();
        n++;
      }
      COST.incrementAndGet(0);
      COST.addAndGet(1, e.size());
      COST.addAndGet(2, System.nanoTime() - t0);
      return n;
    } catch (VirtualMachineError fatal) {
      throw fatal;
    } catch (Throwable t) {
      LrcLog.warnOnce("executor.countValues", "spark-lrc: could not count the values of " + id
          + " (reported as unknown)", t);
      return UNKNOWN;
    }
  }
}
