package org.sparklrc.bench;

import java.util.Collections;
import java.util.Iterator;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.sparklrc.LrcExecutorPlugin;

/**
 * A task body that reports the plugin state of the executor JVM it runs in (entries per
 * structure, {@link LrcExecutorPlugin#stateSizes()}): the bounded-state benchmark runs it on
 * every executor through {@code JavaRDD.mapPartitions} from the driver (workloads/scale_jobs.py).
 */
public final class StateProbe implements FlatMapFunction<Iterator<Integer>, String> {
  private static final long serialVersionUID = 1L;

  @Override
  public Iterator<String> call(Iterator<Integer> it) {
    return Collections.singletonList(LrcExecutorPlugin.stateSizes()).iterator();
  }
}
