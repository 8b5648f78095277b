package org.sparklrc;

/**
 * What an executor asks the driver's TableEndpoint: the table changes since {@code haveVersion},
 * held up to {@code holdMs} until there are some (0: answer at once). Asking also tells the driver
 * that this executor has applied every change up to {@code haveVersion} (see TableStore). Crosses
 * the wire as a String (always deserializable on the driver). Public (with its constructor) only
 * so that tests can ask a TableStore via py4j.
 */
public final class TableRequest {
  static final String PREFIX = "lrc:ask|";

  final String executor;
  final long haveVersion;
  final long holdMs;

  public TableRequest(String executor, long haveVersion, long holdMs) {
    this.executor = executor;
    this.haveVersion = haveVersion;
    this.holdMs = holdMs;
  }

  String encode() {
    return PREFIX + haveVersion + "|" + holdMs + "|" + executor;
  }

  static TableRequest decode(String s) {
    String[] f = s.substring(PREFIX.length()).split("\\|", 3);
    return new TableRequest(f[2], Long.parseLong(f[0]), Long.parseLong(f[1]));
  }
}
