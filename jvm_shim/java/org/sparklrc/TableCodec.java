package org.sparklrc;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Text forms of the priority table, decoded here and nowhere else in Java. RDD arrays and stage
 * lists are what Python's brain publishes: both formats are documented once, in the docstring of
 * {@code spark_plugin/wire.py} (their only encoder). The driver re-encodes deltas for executors as
 * the reply of a TableRequest:
 * {@code version|reset(0/1)|brain(0/1)|plannedStagesCsv|rddArrays|publishedMicros|movesSet(0/1)|moves};
 * without reset it holds the changes since the asker's version (an empty array removes the RDD;
 * an RDD the asker holds at its current size, changed only partition by partition since, comes
 * as {@code rddId@part:p,...} with just those partitions, so a reply is O(changes)),
 * with reset the whole table, replacing the asker's (its version was older than the driver's log);
 * publishedMicros is the driver's wall clock when that version was published; movesSet says
 * that {@code moves} (GPU placement, format in wire.py) replaces the asker's whole list.
 * Public only so that tests can decode a Python-encoded table through py4j, and benchmarks a
 * reply.
 */
public final class TableCodec {
  private TableCodec() {}

  static double parsePriority(String s) {
    String t = s.trim();
    switch (t.toLowerCase()) {
      case "inf": case "+inf": case "infinity": case "+infinity": return Double.POSITIVE_INFINITY;
      case "-inf": case "-infinity": return Double.NEGATIVE_INFINITY;
      case "nan": return Double.NaN;
      default: return Double.parseDouble(t);
    }
  }

  /** The arrays a table text sets, for tests: {@code rddId=...} items as given, {@code
   * rddId@part:p,...} items as a new array (zeros elsewhere). */
  public static Map<Integer, double[]> parseArrays(String text) {
    Items items = parseItems(text);
    items.partial.forEach((rdd, changes) -> items.whole.put(rdd, updated(null, changes)));
    return items.whole;
  }

  /** The two item forms of a table text, apart: whole arrays, and partition changes. */
  static final class Items {
    /** rddId -> its whole array (empty: removed), in text order. */
    final Map<Integer, double[]> whole = new LinkedHashMap<>();
    /** rddId -> partition -> priority, for RDDs whose array the text does not give whole. */
    final Map<Integer, Map<Integer, Double>> partial = new LinkedHashMap<>();
  }

  /**
   * Parses a table text. A partial item that follows a whole one of the same RDD applies to that
   * array; a whole item replaces what came before it.
   */
  static Items parseItems(String text) {
    Items out = new Items();
    if (text == null || text.trim().isEmpty()) {
      return out;
    }
    for (String item : text.split(";")) {
      if (item.trim().isEmpty()) {
        continue;
      }
      int eq = item.indexOf('=');
      int at = item.indexOf('@');
      if (at >= 0 && (eq < 0 || at < eq)) {
        int rdd = Integer.parseInt(item.substring(0, at).trim());
        Map<Integer, Double> changes = parseChanges(item.substring(at + 1));
        double[] whole = out.whole.get(rdd);
        if (whole != null) {
          out.whole.put(rdd, updated(whole, changes));
        } else {
          out.partial.computeIfAbsent(rdd, r -> new LinkedHashMap<>()).putAll(changes);
        }
        continue;
      }
      if (eq < 0) {
        throw new IllegalArgumentException("bad table item (want rddId=p0,p1,... or "
            + "rddId@part:p,...): " + item);
      }
      int rdd = Integer.parseInt(item.substring(0, eq).trim());
      out.partial.remove(rdd);
      String vals = item.substring(eq + 1).trim();
      if (vals.isEmpty()) {
        out.whole.put(rdd, new double[0]);
        continue;
      }
      String[] parts = vals.split(",");
      double[] arr = new double[parts.length];
      for (int i = 0; i < parts.length; i++) {
        arr[i] = parsePriority(parts[i]);
      }
      out.whole.put(rdd, arr);
    }
    return out;
  }

  /** {@code part:priority,...}, in order (a partition listed twice: the last one holds). */
  private static Map<Integer, Double> parseChanges(String changes) {
    Map<Integer, Double> out = new LinkedHashMap<>();
    for (String c : changes.split(",")) {
      int colon = c.indexOf(':');
      if (colon < 0) {
        throw new IllegalArgumentException("bad partition change (want part:priority): " + c);
      }
      int part = Integer.parseInt(c.substring(0, colon).trim());
      if (part < 0) {
        throw new IllegalArgumentException("negative partition in table change: " + c);
      }
      out.put(part, parsePriority(c.substring(colon + 1)));
    }
    return out;
  }

  /** A copy of {@code base} (zeros if null), grown to hold every changed partition, with the
   * changes applied. */
  static double[] updated(double[] base, Map<Integer, Double> changes) {
    int size = base == null ? 0 : base.length;
    for (Integer part : changes.keySet()) {
      size = Math.max(size, part + 1);
    }
    double[] out = base == null ? new double[size] : Arrays.copyOf(base, size);
    for (Map.Entry<Integer, Double> c : changes.entrySet()) {
      out[c.getKey()] = c.getValue();
    }
    return out;
  }

  static String formatArrays(Map<Integer, double[]> arrays) {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<Integer, double[]> e : arrays.entrySet()) {
      if (b.length() > 0) {
        b.append(';');
      }
      b.append(e.getKey()).append('=');
      double[] a = e.getValue();
      for (int i = 0; i < a.length; i++) {
        if (i > 0) {
          b.append(',');
        }
        b.append(a[i]); // Double.toString: "Infinity", "-Infinity", "NaN" parse back
      }
    }
    return b.toString();
  }

  /** {@code rddId@part:p,...} items of {@code partial}, {@code ;}-separated. */
  static String formatChanges(Map<Integer, Map<Integer, Double>> partial) {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<Integer, Map<Integer, Double>> e : partial.entrySet()) {
      b.append(b.length() > 0 ? ";" : "").append(e.getKey()).append('@');
      boolean first = true;
      for (Map.Entry<Integer, Double> c : e.getValue().entrySet()) {
        b.append(first ? "" : ",").append(c.getKey()).append(':').append(c.getValue());
        first = false;
      }
    }
    return b.toString();
  }

  static List<Integer> parseInts(String csv) {
    List<Integer> out = new ArrayList<>();
    if (csv == null) {
      return out;
    }
    for (String t : csv.split(",")) {
      if (!t.trim().isEmpty()) {
        out.add(Integer.parseInt(t.trim()));
      }
    }
    return out;
  }

  static String formatInts(Iterable<Integer> xs) {
    StringBuilder b = new StringBuilder();
    for (Integer x : xs) {
      if (b.length() > 0) {
        b.append(',');
      }
      b.append(x);
    }
    return b.toString();
  }

  /** A decoded table reply. */
  public static final class Reply {
    final long version;
    final boolean reset;
    final boolean brain;
    final List<Integer> planned;
    /** Whole arrays (empty: removed). */
    final Map<Integer, double[]> arrays;
    /** Partition changes of RDDs the asker holds at their current size (not in arrays). */
    final Map<Integer, Map<Integer, Double>> partial;
    final long publishedMicros;
    /** The GPU placement moves replacing the asker's, or null: unchanged since its version. */
    final String moves;

    Reply(long version, boolean reset, boolean brain, List<Integer> planned,
        Map<Integer, double[]> arrays, Map<Integer, Map<Integer, Double>> partial,
        long publishedMicros, String moves) {
      this.version = version;
      this.reset = reset;
      this.brain = brain;
      this.planned = planned;
      this.arrays = arrays;
      this.partial = partial;
      this.publishedMicros = publishedMicros;
      this.moves = moves;
    }

    String encode() {
      String whole = formatArrays(arrays);
      String changes = formatChanges(partial);
      return version + "|" + (reset ? 1 : 0) + "|" + (brain ? 1 : 0) + "|" + formatInts(planned)
          + "|" + whole + (whole.isEmpty() || changes.isEmpty() ? "" : ";") + changes
          + "|" + publishedMicros
          + (moves == null ? "|0|" : "|1|" + moves);
    }

    /** Applies this reply to an executor's table; whether it moved the table to a new version
     * (or reset it). A reply that planned stages but did not move applies those. */
    public boolean applyTo(PriorityEntries entries) {
      boolean moved = reset || version > entries.version();
      if (moved || !planned.isEmpty()) {
        entries.applyTable(version, reset, arrays, partial, planned);
      }
      return moved;
    }

    public static Reply decode(String s) {
      String[] f = s.split("\\|", -1);
      String moves = f.length > 7 && "1".equals(f[6]) ? f[7] : null;
      Items items = parseItems(f[4]);
      return new Reply(Long.parseLong(f[0]), "1".equals(f[1]), "1".equals(f[2]), parseInts(f[3]),
          items.whole, items.partial, Long.parseLong(f[5]), moves);
    }
  }
}
