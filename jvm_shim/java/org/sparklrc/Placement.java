package org.sparklrc;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkEnv;
import org.apache.spark.memory.MemoryManager;
import org.apache.spark.rpc.RpcTimeout;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.RDDBlockId;
import scala.concurrent.duration.FiniteDuration;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Executor half of GPU-aware placement. The brain decides the moves (a GPU stage's cached inputs
 * that sit only on executors without GPUs go to a GPU executor) and they arrive with the table.
 * On the target executor one thread takes each move it lacks, checks that its memory has room
 * for the block without evicting anything ranked at or above it (free storage memory plus the
 * blocks of other RDDs ranked below it; the copy's put holds to the same bound whatever was
 * stored meanwhile, {@link CopyGuard}), and asks the driver (PlaceRequest, over the table's
 * endpoint) to have a holder replicate it here with Spark's own {@code ReplicateBlock} message:
 * the holder copies it with
 * {@code BlockManager.replicateBlock}, which keeps the storage level and the block's ClassTag
 * (PySpark's Kryo-serialized byte arrays stay readable) and tells the master, and its
 * PlacementPolicy picks this executor. Once the brain sees the copy it marks the move done; the
 * holders' own copies then go first on eviction there (an executor-local override in
 * PriorityEntries). Any failure leaves the block where it is: Spark reads it remotely as always.
 */
final class Placement {
  /** One move: a block, the executor it goes to, its size, whether the copy arrived. */
  static final class Move {
    final RDDBlockId block;
    final String target;
    final long bytes;
    final boolean done;

    Move(RDDBlockId block, String target, long bytes, boolean done) {
      this.block = block;
      this.target = target;
      this.bytes = bytes;
      this.done = done;
    }
  }

  private static final long ASK_TIMEOUT_MS = 120_000;
  private static final ClassTag<String> STRING = ClassTag$.MODULE$.apply(String.class);

  /** The executor's placement (null until the plugin installs one): the policy reads it. */
  static volatile Placement current;

  private final String executorId;
  private final PriorityEntries entries;
  private volatile Map<BlockId, Move> moves = Collections.emptyMap();
  /** Moves this executor already tried (attempted once per list that names them). */
  private final Set<BlockId> tried = Collections.synchronizedSet(new HashSet<>());
  private final LinkedBlockingQueue<Move> queue = new LinkedBlockingQueue<>();
  private final Thread thread;
  private volatile boolean stopped = false;

  Placement(String executorId, PriorityEntries entries) {
    this.executorId = executorId;
    this.entries = entries;
    this.thread = new Thread(this::run, "spark-lrc-placement");
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  void stop() {
    stopped = true;
    thread.interrupt();
  }

  /** The move naming this block, or null. */
  Move moveOf(BlockId block) {
    return moves.get(block);
  }

  static Map<BlockId, Move> parse(String text) {
    Map<BlockId, Move> out = new LinkedHashMap<>();
    if (text == null || text.trim().isEmpty()) {
      return out;
    }
    for (String item : text.split(";")) {
      String[] f = item.trim().split(",");
      if (f.length != 5) {
        throw new IllegalArgumentException("bad move (want rdd,part,target,bytes,done): " + item);
      }
      RDDBlockId b = new RDDBlockId(Integer.parseInt(f[0].trim()), Integer.parseInt(f[1].trim()));
      out.put(b, new Move(b, f[2].trim(), Long.parseLong(f[3].trim()), "1".equals(f[4].trim())));
    }
    return out;
  }

  /** A new list from the driver: demote copies of done moves, queue the moves into this one. */
  void apply(String text) {
    Map<BlockId, Move> fresh = parse(text);
    moves = fresh;
    Set<BlockId> demote = new HashSet<>();
    List<Move> mine = new ArrayList<>();
    for (Move m : fresh.values()) {
      if (m.done && !m.target.equals(executorId)) {
        demote.add(m.block);
      } else if (!m.done && m.target.equals(executorId)) {
        mine.add(m);
      }
    }
    tried.retainAll(fresh.keySet());
    entries.setDemoted(demote);
    for (Move m : mine) {
      if (tried.add(m.block)) {
        queue.add(m);
      }
    }
  }

  private void run() {
    while (!stopped) {
      Move m;
      try {
        m = queue.poll(1, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        return;
      }
      if (m == null || moves.get(m.block) == null) {
        continue; // withdrawn meanwhile
      }
      try {
        fetch(m);
      } catch (Throwable t) {
        LrcLog.warnOnce("placement.fetch", "spark-lrc: executor " + executorId
            + " could not place " + m.block + " (left where it is; Spark reads it remotely)", t);
      }
    }
  }

  /** Room for the block here without evicting anything ranked at or above it. */
  boolean hasRoom(Move m) {
    MemoryManager mm = SparkEnv.get().memoryManager();
    long free = mm.maxOnHeapStorageMemory() - mm.onHeapStorageMemoryUsed();
    double p = entries.tablePriority(m.block.rddId(), m.block.splitIndex());
    return free + entries.roomBelow(p, m.block.rddId()) >= m.bytes;
  }

  private void fetch(Move m) {
    if (SparkEnv.get().blockManager().memoryStore().contains(m.block)) {
      return;
    }
    if (!hasRoom(m)) {
      LrcLog.info("spark-lrc: executor " + executorId + " skips placing " + m.block + " ("
          + m.bytes + " bytes): no room without evicting a block ranked at or above it");
      return;
    }
    entries.expectCopy(m.block); // the put re-checks the room: a task's insert may come first
    String ok;
    try {
      ok = TableEndpoint.driverRef().askSync(new PlaceRequest(executorId, m.block).encode(),
          new RpcTimeout(FiniteDuration.apply(ASK_TIMEOUT_MS, TimeUnit.MILLISECONDS),
              "spark.lrc placement"), STRING);
    } finally {
      entries.copyDone(m.block); // the driver answers once the holder's replication ended
    }
    LrcLog.info("spark-lrc: executor " + executorId + " asked for " + m.block + " (" + m.bytes
        + " bytes): " + ("true".equals(ok) ? "copied here" : "not copied"));
  }

  /** For tests: the moves in force. */
  Map<BlockId, Move> moves() {
    return new HashMap<>(moves);
  }
}
