package org.sparklrc;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkEnv;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcTimeout;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.BlockManagerMaster;
import org.apache.spark.storage.BlockManagerMessages;
import org.apache.spark.storage.RDDBlockId;
import scala.concurrent.duration.FiniteDuration;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * A GPU executor asks the driver's TableEndpoint to have a block copied into it (see
 * Placement). Executors cannot reach one another's RPC endpoints (their RpcEnvs are clients of
 * the driver's), so the driver forwards Spark's own {@code ReplicateBlock} to the storage
 * endpoint of an executor holding the block, as the BlockManagerMaster does for proactive
 * replication; the holder's {@code BlockManager.replicateBlock} copies it and its
 * PlacementPolicy picks the asker. Answered with "true" when a copy was made.
 */
final class PlaceRequest {
  static final String PREFIX = "lrc:place|";
  private static final long ASK_TIMEOUT_MS = 120_000;
  private static final ClassTag<Object> ANY = ClassTag$.MODULE$.apply(Object.class);

  final String target;
  final RDDBlockId block;

  PlaceRequest(String target, RDDBlockId block) {
    this.target = target;
    this.block = block;
  }

  String encode() {
    return PREFIX + block.rddId() + "|" + block.splitIndex() + "|" + target;
  }

  static PlaceRequest decode(String s) {
    String[] f = s.substring(PREFIX.length()).split("\\|", 3);
    return new PlaceRequest(f[2], new RDDBlockId(Integer.parseInt(f[0]), Integer.parseInt(f[1])));
  }

  /** Driver side: has a holder replicate the block to the target; blocks (not on a dispatcher). */
  String serve() {
    BlockManagerMaster master = SparkEnv.get().blockManager().master();
    List<BlockManagerId> holders = new ArrayList<>(
        scala.jdk.javaapi.CollectionConverters.asJava(master.getLocations(block)));
    BlockManagerId holder = null;
    for (BlockManagerId h : holders) {
      if (h.executorId().equals(target)) {
        return "true"; // already there
      }
      if (holder == null && !h.isDriver()) {
        holder = h;
      }
    }
    if (holder == null) {
      return "false"; // cached nowhere now
    }
    scala.Option<RpcEndpointRef> ref = master.getExecutorEndpointRef(holder.executorId());
    if (ref.isEmpty()) {
      return "false";
    }
    List<BlockManagerId> others = new ArrayList<>(holders);
    others.remove(holder);
    // replicate() copies to (maxReplicas - 1 - |existing|) new peers: exactly one here
    BlockManagerMessages.ReplicateBlock msg = new BlockManagerMessages.ReplicateBlock(block,
        scala.jdk.javaapi.CollectionConverters.asScala(others).toList(), holders.size() + 1);
    RpcTimeout timeout = new RpcTimeout(
        FiniteDuration.apply(ASK_TIMEOUT_MS, TimeUnit.MILLISECONDS), "spark.lrc placement");
    Object ok = ref.get().askSync(msg, timeout, ANY);
    return String.valueOf(Boolean.TRUE.equals(ok) && master.getLocations(block).exists(
        id -> id.executorId().equals(target)));
  }
}
