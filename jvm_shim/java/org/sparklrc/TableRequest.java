package org.sparklrc;

/**
 * What an executor asks the driver's TableEndpoint: the table changes since {@code haveVersion},
 * held up to {@code holdMs} until there are some (0: answer at once). Asking also tells the driver
 * that this executor has applied every change up to {@code haveVersion} (see TableStore), and
 * {@code appliedLagMs} (NaN: none) how long after its publish the answer before this ask was applied:
 * the driver's {@code table_applied} event, carried by the ask that follows every apply anyway
 * instead of a message of its own per version. Crosses the wire as a String (always
 * deserializable on the driver). Public (with its constructor) only so that tests can ask a
 * TableStore via py4j.
 */
public final class TableRequest {
  static final String PREFIX = "lrc:ask|";

  final String executor;
  final long haveVersion;
  final long holdMs;
  final double appliedLagMs; // NaN: no version applied since the last ask

  public TableRequest(String executor, long haveVersion, long holdMs) {
    this(executor, haveVersion, holdMs, Double.NaN);
  }

  TableRequest(String executor, long haveVersion, long holdMs, double appliedLagMs) {
    this.executor = executor;
    this.haveVersion = haveVersion;
    this.holdMs = holdMs;
    this.appliedLagMs = appliedLagMs;
  }

  String encode() {
    return PREFIX + haveVersion + "|" + holdMs + "|" + appliedLagMs + "|" + executor;
  }

  static TableRequest decode(String s) {
    String[] f = s.substring(PREFIX.length()).split("\\|", 4);
    return new TableRequest(f[3], Long.parseLong(f[0]), Long.parseLong(f[1]),
        Double.parseDouble(f[2]));
  }

  /** The executor's {@code table_applied} event this ask carries, or null. */
  String appliedEvent() {
    return Double.isNaN(appliedLagMs) ? null
        : Events.tableApplied(executor, haveVersion, appliedLagMs);
  }
}
