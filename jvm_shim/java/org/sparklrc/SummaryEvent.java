package org.sparklrc;

import org.apache.spark.scheduler.SparkListenerEvent;

/**
 * The application's spark-lrc stats as a listener event, so that Spark's event log (and with it
 * the History Server) keeps them: JsonProtocol writes an event class it does not know as
 * {@code {"Event": "org.sparklrc.SummaryEvent", "stats": "<stats JSON>"}} (Jackson, through the
 * getter). {@code python -m spark_plugin report EVENT_LOG} reads it back.
 */
public final class SummaryEvent implements SparkListenerEvent {
  private final String stats;

  public SummaryEvent(String stats) {
    this.stats = stats;
  }

  /** The brain's stats() as JSON text. */
  public String getStats() {
    return stats;
  }

  @Override
  public boolean logEvent() {
    return true;
  }
}
