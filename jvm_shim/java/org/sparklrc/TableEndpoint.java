package org.sparklrc;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkEnv;
import org.apache.spark.rpc.RpcCallContext;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.rpc.ThreadSafeRpcEndpoint;
import org.apache.spark.util.RpcUtils;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * The driver's table endpoint in Spark's own RpcEnv (no new port; {@code spark.authenticate}
 * covers it): executors send TableRequests and the TableStore answers each as soon as the table
 * has moved past the asker's version - at once, or parked until the next publish (push), or after
 * the request's hold time with no change. Never blocks Spark's dispatcher thread.
 */
final class TableEndpoint implements ThreadSafeRpcEndpoint {
  static final String NAME = "spark-lrc-tables";
  /** How often parked requests are checked for their hold time. */
  private static final long EXPIRE_EVERY_MS = 100;

  private final RpcEnv env;
  private final TableStore tables;
  private final ScheduledExecutorService expirer;
  /** GPU placement requests wait here for the holder's copy, off Spark's dispatcher. */
  private final java.util.concurrent.ExecutorService placer;
  private final RpcEndpointRef self;

  private TableEndpoint(RpcEnv env, TableStore tables) {
    this.env = env;
    this.tables = tables;
    this.expirer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "spark-lrc-table-hold");
      t.setDaemon(true);
      return t;
    });
    this.placer = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "spark-lrc-placement");
      t.setDaemon(true);
      return t;
    });
    this.self = env.setupEndpoint(NAME, this);
    expirer.scheduleWithFixedDelay(() -> {
      PluginCpu.wholeThread(PluginCpu.Part.TABLE_HOLD);
      tables.expireParked();
    }, EXPIRE_EVERY_MS, EXPIRE_EVERY_MS, TimeUnit.MILLISECONDS);
  }

  /** Registers the endpoint in the driver's RpcEnv. */
  static TableEndpoint start(RpcEnv env, TableStore tables) {
    return new TableEndpoint(env, tables);
  }

  /** An executor's reference to the driver's endpoint (an RPC round trip: not on a task path). */
  static RpcEndpointRef driverRef() {
    SparkEnv se = SparkEnv.get();
    return RpcUtils.makeDriverRef(NAME, se.conf(), se.rpcEnv());
  }

  /** Answers what is parked and unregisters; executors then see a failed ask and retry. */
  void close() {
    expirer.shutdownNow();
    placer.shutdownNow();
    tables.flushParked();
    env.stop(self);
  }

  /** A GPU executor's placement request, served on the placer thread (one copy at a time). */
  private void place(String m, RpcCallContext ctx) {
    try {
      PlaceRequest req = PlaceRequest.decode(m);
      placer.execute(() -> {
        try {
          ctx.reply(req.serve());
        } catch (Throwable t) {
          LrcLog.warnOnce("driver.place", "spark-lrc: a GPU placement copy failed (the block "
              + "stays where it is)", t);
          ctx.sendFailure(t);
        }
      });
    } catch (Throwable t) {
      ctx.sendFailure(t);
    }
  }

  @Override
  public RpcEnv rpcEnv() {
    return env;
  }

  @Override
  public scala.PartialFunction<Object, BoxedUnit> receiveAndReply(RpcCallContext ctx) {
    return new AbstractPartialFunction<Object, BoxedUnit>() {
      @Override
      public boolean isDefinedAt(Object m) {
        return m instanceof String && (((String) m).startsWith(TableRequest.PREFIX)
            || ((String) m).startsWith(PlaceRequest.PREFIX));
      }

      @Override
      public BoxedUnit apply(Object m) {
        if (((String) m).startsWith(PlaceRequest.PREFIX)) {
          place((String) m, ctx);
          return BoxedUnit.UNIT;
        }
        long cpu = PluginCpu.start();
        try {
          TableRequest req = TableRequest.decode((String) m);
          String applied = req.appliedEvent();
          if (applied != null) {
            EventBuffer.addLazy(applied);
          }
          tables.watch(req, ctx::reply);
        } catch (Throwable t) {
          LrcLog.warnOnce("driver.tableRequest", "spark-lrc: bad table request from an executor", t);
          ctx.sendFailure(t);
        } finally {
          PluginCpu.add(PluginCpu.Part.TABLE_REQUESTS, cpu);
        }
        return BoxedUnit.UNIT;
      }
    };
  }
}
