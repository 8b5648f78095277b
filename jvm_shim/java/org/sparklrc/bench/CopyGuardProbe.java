package org.sparklrc.bench;

import java.nio.ByteBuffer;
import org.apache.spark.SparkEnv;
import org.apache.spark.memory.MemoryManager;
import org.apache.spark.memory.MemoryMode;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.memory.MemoryStore;
import org.apache.spark.util.io.ChunkedByteBuffer;
import org.sparklrc.LrcExecutorPlugin;
import org.sparklrc.PriorityEntries;
import scala.reflect.ClassTag$;

/**
 * Stores a block straight into this JVM's MemoryStore the way a GPU placement copy arrives (a
 * put on a thread that runs no task), {@code over} bytes larger than the storage memory free
 * now, so that Spark's put must evict: tests/spark/test_shim_local.py checks that an expected
 * copy evicts only blocks ranked below it (CopyGuard) and that any other put evicts as Spark
 * does, and that with admission a put evicts only blocks ranked at or below it (Admission).
 * The stored block is removed again; the answer is whether the put succeeded.
 */
public final class CopyGuardProbe {
  private CopyGuardProbe() {}

  public static boolean put(int rdd, int part, long over, boolean asCopy) {
    PriorityEntries entries = LrcExecutorPlugin.installedEntries();
    MemoryStore store = SparkEnv.get().blockManager().memoryStore();
    MemoryManager mm = SparkEnv.get().memoryManager();
    RDDBlockId block = new RDDBlockId(rdd, part);
    int size = (int) (mm.maxOnHeapStorageMemory() - mm.onHeapStorageMemoryUsed() + over);
    if (asCopy) {
      entries.expectCopy(block);
    }
    try {
      boolean ok = store.putBytes(block, size, MemoryMode.ON_HEAP,
          () -> new ChunkedByteBuffer(ByteBuffer.allocate(size)),
          ClassTag$.MODULE$.apply(byte[].class));
      if (ok) {
        store.remove(block);
      }
      return ok;
    } finally {
      entries.copyDone(block);
    }
  }

  /** Blocks of the RDD in this JVM's MemoryStore. */
  public static int cached(int rdd, int parts) {
    MemoryStore store = SparkEnv.get().blockManager().memoryStore();
    int n = 0;
    for (int p = 0; p < parts; p++) {
      n += store.contains(new RDDBlockId(rdd, p)) ? 1 : 0;
    }
    return n;
  }

  /** Whether this JVM's MemoryStore holds the block named {@code name} (e.g. broadcast_3). */
  public static boolean inMemory(String name) {
    return SparkEnv.get().blockManager().memoryStore().contains(BlockId.apply(name));
  }

  /** Storage memory free in this JVM now (on heap). */
  public static long storageFree() {
    MemoryManager mm = SparkEnv.get().memoryManager();
    return mm.maxOnHeapStorageMemory() - mm.onHeapStorageMemoryUsed();
  }

  /** Storage memory used in this JVM now (on heap). */
  public static long storageUsed() {
    return SparkEnv.get().memoryManager().onHeapStorageMemoryUsed();
  }

  /** Bytes the MemoryStore holds for an RDD block (0 if it holds none). */
  public static long memSize(int rdd, int part) {
    return SparkEnv.get().blockManager().memoryStore().getSize(new RDDBlockId(rdd, part));
  }

  /** Admission on or off in this JVM's executor (spark.lrc.admit). */
  public static void setAdmit(boolean admit) {
    LrcExecutorPlugin.installedEntries().setAdmit(admit);
  }

  /** Whether this JVM's executor admits stores by rank (as its settings resolved it). */
  public static boolean admitOn() {
    return LrcExecutorPlugin.installedEntries().admitOn();
  }

  /** Whether this JVM's executor counts serialized blocks' values (as its settings resolved it). */
  public static boolean countValuesOn() {
    return LrcExecutorPlugin.installedEntries().countValuesOn();
  }

  /** Version of the table in force here. */
  public static long version() {
    return LrcExecutorPlugin.installedEntries().version();
  }
}
