package org.sparklrc;

/**
 * What an executor asks the driver: the table changes since {@code haveVersion}; when
 * {@code stageId >= 0} is not planned yet and a brain is attached the driver waits up to
 * {@code waitMs} for it. Asking also tells the driver that this executor has applied every change
 * up to {@code haveVersion} (see TableStore). Crosses the wire as a String (always deserializable
 * on the driver). Public (with its constructor) only so that tests can ask a TableStore via py4j.
 */
public final class TableRequest {
  static final String PREFIX = "lrc:ask|";

  final String executor;
  final long haveVersion;
  final int stageId;
  final long waitMs;

  public TableRequest(String executor, long haveVersion, int stageId, long waitMs) {
    this.executor = executor;
    this.haveVersion = haveVersion;
    this.stageId = stageId;
    this.waitMs = waitMs;
  }

  String encode() {
    return PREFIX + haveVersion + "|" + stageId + "|" + waitMs + "|" + executor;
  }

  static TableRequest decode(String s) {
    String[] f = s.substring(PREFIX.length()).split("\\|", 4);
    return new TableRequest(f[3], Long.parseLong(f[0]), Integer.parseInt(f[1]),
        Long.parseLong(f[2]));
  }
}
