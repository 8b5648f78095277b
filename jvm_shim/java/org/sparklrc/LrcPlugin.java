package org.sparklrc;

import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.SparkPlugin;

/** Entry class for {@code spark.plugins=org.sparklrc.LrcPlugin}: hands off to the two halves. */
public final class LrcPlugin implements SparkPlugin {
  @Override
  public DriverPlugin driverPlugin() {
    return new LrcDriverPlugin();
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new LrcExecutorPlugin();
  }
}
