package org.sparklrc;

import java.util.Collection;

/** Minimal JSON writing helpers (no dependency beyond the JDK). */
final class Json {
  private Json() {}

  static String str(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder b = new StringBuilder(s.length() + 2);
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"': b.append("\\\""); break;
        case '\\': b.append("\\\\"); break;
        case '\n': b.append("\\n"); break;
        case '\r': b.append("\\r"); break;
        case '\t': b.append("\\t"); break;
        default:
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
      }
    }
    return b.append('"').toString();
  }

  static String ints(Collection<Integer> xs) {
    StringBuilder b = new StringBuilder("[");
    boolean first = true;
    for (Integer x : xs) {
      if (!first) {
        b.append(',');
      }
      first = false;
      b.append(x);
    }
    return b.append(']').toString();
  }

  static String strs(Collection<String> xs) {
    StringBuilder b = new StringBuilder("[");
    boolean first = true;
    for (String x : xs) {
      if (!first) {
        b.append(',');
      }
      first = false;
      b.append(str(x));
    }
    return b.append(']').toString();
  }
}
