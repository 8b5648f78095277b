package org.sparklrc;

import java.lang.reflect.Field;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManager;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.BlockReplicationPolicy;
import scala.collection.immutable.List;
import scala.collection.immutable.Nil$;
import scala.collection.immutable.Seq;
import scala.collection.mutable.HashSet;

/**
 * The executor's block replication policy with one addition: a block the brain moves to a GPU
 * executor (see Placement) is replicated to that executor and nowhere else; every other block is
 * ranked by the policy Spark had (spark.storage.replication.policy, RandomBlockReplicationPolicy
 * by default), so replicated storage levels behave exactly as before.
 *
 * <p>Installed by replacing BlockManager's private, non-final {@code blockReplicationPolicy}
 * field in ExecutorPlugin.init, wrapping the instance Spark created: Spark instantiates the
 * configured class in BlockManager.initialize, before the executor has fetched spark.jars, so a
 * policy class in the shim jar cannot be named in the conf.
 */
final class PlacementPolicy implements BlockReplicationPolicy {
  private final BlockReplicationPolicy delegate;

  PlacementPolicy(BlockReplicationPolicy delegate) {
    this.delegate = delegate;
  }

  /** Wraps the BlockManager's policy (idempotent); throws when the field cannot be replaced. */
  static void install(BlockManager bm) throws Exception {
    Field f = BlockManager.class.getDeclaredField("blockReplicationPolicy");
    f.setAccessible(true);
    Object old = f.get(bm);
    if (old instanceof PlacementPolicy) {
      return;
    }
    if (!(old instanceof BlockReplicationPolicy)) {
      throw new IllegalStateException("BlockManager.blockReplicationPolicy is " + old);
    }
    f.set(bm, new PlacementPolicy((BlockReplicationPolicy) old));
  }

  @Override
  public List<BlockManagerId> prioritize(BlockManagerId blockManagerId, Seq<BlockManagerId> peers,
      HashSet<BlockManagerId> peersReplicatedTo, BlockId blockId, int numReplicas) {
    Placement p = Placement.current;
    Placement.Move m = p == null ? null : p.moveOf(blockId);
    if (m == null) {
      return delegate.prioritize(blockManagerId, peers, peersReplicatedTo, blockId, numReplicas);
    }
    scala.collection.Iterator<BlockManagerId> it = peers.iterator();
    while (it.hasNext()) {
      BlockManagerId peer = it.next();
      if (peer.executorId().equals(m.target) && !peersReplicatedTo.contains(peer)) {
        return Nil$.MODULE$.$colon$colon(peer);
      }
    }
    return scala.collection.immutable.List$.MODULE$.empty(); // the target is gone or has it: a placed block goes nowhere else
  }
}
